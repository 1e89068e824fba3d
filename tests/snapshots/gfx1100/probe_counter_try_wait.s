v_mov_b32_e32 v0, 0
ds_load_b64 v[1:2], v0
s_waitcnt lgkmcnt(0)
v_readfirstlane_b32 s2, v1
s_add_i32 s3, s2, -1
s_delay_alu instid0(SALU_CYCLE_1)
s_cmp_gt_i32 s3, -1
s_cselect_b32 s2, -1, 0
s_cmp_lt_i32 s3, 0
s_cbranch_scc1 0
s_load_b64 s[0:1], s[0:1], null
s_and_b32 s2, s2, exec_lo
s_cselect_b32 s2, 1, 0
s_delay_alu instid0(SALU_CYCLE_1)
v_mov_b32_e32 v1, s2
s_waitcnt lgkmcnt(0)
global_store_b32 v0, v1, s[0:1]
s_endpgm
