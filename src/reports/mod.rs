//! Rendering results for people and programs.
//!
//! [`tree`] turns an [`crate::check::Outcome`] into Elle's result map as a
//! small value tree (ops as Jepsen op maps, steps and cases with Elle's keys);
//! [`edn`] and [`json`] print that tree, so both formats always agree; [`table`]
//! prints a terminal summary; [`text`] explains cycles in Elle's words and
//! [`directory`] writes Elle's output directory.

pub mod directory;
pub mod dot;
pub mod edn;
pub mod json;
pub mod table;
pub mod text;
pub mod tree;
