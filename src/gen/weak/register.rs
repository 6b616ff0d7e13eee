//! Registers for the weak stores: a version of a key is the last value its
//! transaction wrote to it, and a read of version `v` returns that value
//! (`nil` for the initial version `0`), or the transaction's own latest
//! write of the key when it wrote the key earlier.

use super::super::out::push_u64;
use super::super::sim::IntMap;
use super::super::txn::DrawnMop;
use super::Data;

/// Every committed version of every register, in commit order per key.
#[derive(Default)]
pub(super) struct Registers {
    values: IntMap<Vec<u64>>,
}

/// The value `mops[..i]` last wrote to `key`, if any.
fn own_write(mops: &[DrawnMop], i: usize, key: u64) -> Option<u64> {
    mops[..i].iter().rev().find_map(|m| match *m {
        DrawnMop::Write(k, v) | DrawnMop::Append(k, v) if k == key => Some(v),
        _ => None,
    })
}

impl Data for Registers {
    const IN_ORDER: bool = false;

    fn commit(&mut self, key: u64, mops: &[DrawnMop]) -> u32 {
        let v = own_write(mops, mops.len(), key).expect("committed keys are written");
        let vs = self.values.entry(key).or_default();
        vs.push(v);
        vs.len() as u32
    }

    fn push_mop(&self, buf: &mut Vec<u8>, mops: &[DrawnMop], i: usize, seen: Option<u32>) {
        let (w, k, v) = match mops[i] {
            DrawnMop::Write(k, v) | DrawnMop::Append(k, v) => (true, k, v),
            DrawnMop::Read(k) => {
                let v = seen.map_or(0, |s| {
                    own_write(mops, i, k).unwrap_or_else(|| match s {
                        0 => 0,
                        s => self.values[&k][s as usize - 1],
                    })
                });
                (false, k, v)
            }
        };
        buf.extend_from_slice(if w { b"[:w " } else { b"[:r " });
        push_u64(buf, k);
        if v == 0 {
            buf.extend_from_slice(b" nil]");
        } else {
            buf.push(b' ');
            push_u64(buf, v);
            buf.push(b']');
        }
    }
}
