//! Host side of gpu-hopper: TMA tensor maps.
