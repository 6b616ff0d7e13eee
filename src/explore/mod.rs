//! `isolde explore`: every history of a small transactional program under an
//! isolation level (explore-ce and explore-ce*, Bouajjani, Enea and
//! Román-Calvo, PLDI'23; spec `explore.md`).

pub mod eval;
pub mod program;
pub mod reader;
