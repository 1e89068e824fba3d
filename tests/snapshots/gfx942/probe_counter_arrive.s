s_mov_b64 s[0:1], exec
v_mbcnt_lo_u32_b32 v0, s0, 0
v_mbcnt_hi_u32_b32 v0, s1, v0
v_cmp_eq_u32_e32 vcc, 0, v0
s_and_saveexec_b64 s[2:3], vcc
s_cbranch_execz 17
s_mov_b64 s[2:3], exec
v_mbcnt_lo_u32_b32 v0, s2, 0
s_waitcnt lgkmcnt(0)
v_mbcnt_hi_u32_b32 v0, s3, v0
v_cmp_eq_u32_e32 vcc, 0, v0
s_and_b64 s[4:5], exec, vcc
s_mov_b64 exec, s[4:5]
s_cbranch_execz 7
s_bcnt1_i32_b64 s0, s[0:1]
s_bcnt1_i32_b64 s1, s[2:3]
s_mul_i32 s0, s0, s1
v_mov_b32_e32 v0, s0
v_mov_b32_e32 v1, 0
ds_add_u64 v1, v[0:1]
s_endpgm
