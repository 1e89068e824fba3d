v_mov_b32_e32 v2, 0
ds_read_b64 v[0:1], v2
s_waitcnt lgkmcnt(0)
s_load_dwordx2 s[0:1], s[0:1], 0x0
v_sub_u32_e32 v0, 0, v0
v_lshrrev_b32_e32 v0, 31, v0
s_waitcnt lgkmcnt(0)
global_store_dword v2, v0, s[0:1]
s_endpgm
