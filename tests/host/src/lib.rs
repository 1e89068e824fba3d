//! Host tests of the protocol live in `tests/`.
