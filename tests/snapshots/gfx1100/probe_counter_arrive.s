s_mov_b32 s0, exec_lo
s_mov_b32 s1, exec_lo
v_mbcnt_lo_u32_b32 v0, s0, 0
s_delay_alu instid0(VALU_DEP_1)
v_cmpx_eq_u32_e32 0, v0
s_cbranch_execz 18
s_mov_b32 s1, exec_lo
s_delay_alu instid0(SALU_CYCLE_1) | instskip(SKIP_1) | instid1(VALU_DEP_1)
v_mbcnt_lo_u32_b32 v0, s1, 0
s_waitcnt lgkmcnt(0)
v_cmp_eq_u32_e32 vcc_lo, 0, v0
s_and_b32 s2, exec_lo, vcc_lo
s_delay_alu instid0(SALU_CYCLE_1)
s_mov_b32 exec_lo, s2
s_cbranch_execz 8
s_bcnt1_i32_b32 s0, s0
s_bcnt1_i32_b32 s1, s1
v_mov_b32_e32 v1, 0
s_mul_i32 s0, s0, s1
s_delay_alu instid0(SALU_CYCLE_1)
v_mov_b32_e32 v0, s0
ds_add_u64 v1, v[0:1]
s_endpgm
