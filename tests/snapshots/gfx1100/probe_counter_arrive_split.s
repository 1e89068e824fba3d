v_and_b32_e32 v0, 1, v0
s_mov_b32 s0, 0
s_delay_alu instid0(VALU_DEP_1)
v_lshl_add_u32 v0, v0, 3, 0
s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(VALU_DEP_1)
v_readfirstlane_b32 s1, v0
v_cmp_eq_u32_e64 s1, s1, v0
s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
v_mov_b32_e32 v1, s1
s_or_b32 s0, s1, s0
s_and_not1_b32 exec_lo, exec_lo, s0
s_cbranch_execnz 65527
s_or_b32 exec_lo, exec_lo, s0
v_mbcnt_lo_u32_b32 v2, v1, 0
v_cmp_ne_u32_e64 s0, 0, v1
s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
v_cmp_eq_u32_e32 vcc_lo, 0, v2
s_and_b32 s0, vcc_lo, s0
s_and_saveexec_b32 s1, s0
s_cbranch_execz 6
v_bcnt_u32_b32 v1, v1, 0
v_mov_b32_e32 v2, 0
s_waitcnt lgkmcnt(0)
ds_add_u64 v0, v[1:2]
s_endpgm
