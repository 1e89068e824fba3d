v_mov_b32_e32 v2, 0
s_load_b64 s[0:1], s[0:1], null
ds_load_b64 v[0:1], v2
s_waitcnt lgkmcnt(0)
buffer_gl0_inv
v_sub_nc_u32_e32 v0, 0, v0
s_delay_alu instid0(VALU_DEP_1)
v_lshrrev_b32_e32 v0, 31, v0
global_store_b32 v2, v0, s[0:1]
s_endpgm
