v_mov_b32_e32 v0, 0
ds_read_b64 v[2:3], v0
s_waitcnt lgkmcnt(0)
v_add_u32_e32 v1, -1, v2
v_cmp_gt_i32_e32 vcc, 0, v1
s_cbranch_vccnz 65530
s_endpgm
