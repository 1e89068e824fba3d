v_and_b32_e32 v0, 1, v0
v_lshl_add_u32 v2, v0, 3, 0
s_mov_b64 s[0:1], 0
v_readfirstlane_b32 s2, v2
s_nop 1
v_cmp_eq_u32_e64 s[2:3], s2, v2
s_or_b64 s[0:1], s[2:3], s[0:1]
s_nop 0
v_mov_b64_e32 v[0:1], s[2:3]
s_andn2_b64 exec, exec, s[0:1]
s_cbranch_execnz 65527
s_or_b64 exec, exec, s[0:1]
v_mbcnt_lo_u32_b32 v3, v0, 0
v_mbcnt_hi_u32_b32 v3, v1, v3
v_cmp_eq_u32_e32 vcc, 0, v3
v_cmp_ne_u64_e64 s[0:1], 0, v[0:1]
s_and_b64 s[0:1], vcc, s[0:1]
s_and_saveexec_b64 s[2:3], s[0:1]
s_cbranch_execz 8
v_bcnt_u32_b32 v0, v0, 0
v_bcnt_u32_b32 v0, v1, v0
v_mov_b32_e32 v1, 0
s_waitcnt lgkmcnt(0)
ds_add_u64 v2, v[0:1]
s_endpgm
