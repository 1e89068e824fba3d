//! Tile schedulers: which work units a CTA computes, as values the host and the device both
//! compile.
