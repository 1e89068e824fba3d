v_mov_b32_e32 v0, 0
ds_load_b64 v[1:2], v0
s_waitcnt lgkmcnt(0)
buffer_gl0_inv
v_add_nc_u32_e32 v1, -1, v1
s_delay_alu instid0(VALU_DEP_1)
v_cmp_lt_i32_e32 vcc_lo, -1, v1
s_cbranch_vccnz 10
s_sleep 1
ds_load_b64 v[1:2], v0
s_waitcnt lgkmcnt(0)
buffer_gl0_inv
v_add_nc_u32_e32 v1, -1, v1
s_delay_alu instid0(VALU_DEP_1)
v_cmp_gt_i32_e32 vcc_lo, 0, v1
s_cbranch_vccnz 65526
s_endpgm
