//! A convergence check of PTX.
