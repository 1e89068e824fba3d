v_mov_b32_e32 v0, 0
ds_read_b64 v[2:3], v0
s_waitcnt lgkmcnt(0)
v_readfirstlane_b32 s0, v2
s_add_i32 s2, s0, -1
s_cmp_gt_i32 s2, -1
s_cselect_b64 s[0:1], -1, 0
s_cmp_lt_i32 s2, 0
s_cbranch_scc1 0
s_load_dwordx2 s[2:3], s[4:5], 0x0
s_and_b64 s[0:1], s[0:1], exec
s_cselect_b32 s0, 1, 0
v_mov_b32_e32 v1, s0
s_waitcnt lgkmcnt(0)
global_store_dword v0, v1, s[2:3]
s_endpgm
