v_mov_b32_e32 v0, 0
v_mov_b32_e32 v1, v0
v_mov_b32_e32 v2, v0
v_mov_b32_e32 v3, v0
ds_write_b128 v0, v[0:3]
s_waitcnt lgkmcnt(0)
s_endpgm
