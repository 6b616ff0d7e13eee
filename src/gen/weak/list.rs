//! Lists for the weak stores: a version of a key is the run of appends its
//! transaction made to it, and a read of version `v` returns the appends of
//! versions `1..=v` in commit order (a prefix of the key's list), followed
//! by the transaction's own earlier appends to the key.

use super::super::out::push_u64;
use super::super::sim::IntMap;
use super::super::txn::DrawnMop;
use super::Data;

/// One key's list: every committed append, in commit order.
#[derive(Default)]
struct List {
    /// The elements rendered as EDN (`"3 1 2"`), so a read copies a prefix.
    text: Vec<u8>,
    /// `ends[i]`: the length of `text` rendering the first `i + 1` elements.
    ends: Vec<u32>,
    /// `versions[v - 1]`: the number of elements versions `1..=v` hold.
    versions: Vec<u32>,
}

impl List {
    /// The rendering of the elements of versions `1..=v`.
    fn prefix(&self, v: u32) -> &[u8] {
        match v {
            0 => &[],
            v => match self.versions[v as usize - 1] {
                0 => &[],
                n => &self.text[..self.ends[n as usize - 1] as usize],
            },
        }
    }
}

/// Every committed append of every list key.
#[derive(Default)]
pub(super) struct Lists {
    lists: IntMap<List>,
}

impl Data for Lists {
    const IN_ORDER: bool = true;

    fn commit(&mut self, key: u64, mops: &[DrawnMop]) -> u32 {
        let l = self.lists.entry(key).or_default();
        for m in mops {
            if let DrawnMop::Append(k, v) | DrawnMop::Write(k, v) = *m {
                if k == key {
                    if !l.text.is_empty() {
                        l.text.push(b' ');
                    }
                    push_u64(&mut l.text, v);
                    l.ends.push(u32::try_from(l.text.len()).expect("list text under 4 GiB"));
                }
            }
        }
        l.versions.push(l.ends.len() as u32);
        l.versions.len() as u32
    }

    fn push_mop(&self, buf: &mut Vec<u8>, mops: &[DrawnMop], i: usize, seen: Option<u32>) {
        match mops[i] {
            DrawnMop::Append(k, v) | DrawnMop::Write(k, v) => {
                buf.extend_from_slice(b"[:append ");
                push_u64(buf, k);
                buf.push(b' ');
                push_u64(buf, v);
                buf.push(b']');
            }
            DrawnMop::Read(k) => {
                buf.extend_from_slice(b"[:r ");
                push_u64(buf, k);
                let Some(s) = seen else {
                    buf.extend_from_slice(b" nil]");
                    return;
                };
                buf.extend_from_slice(b" [");
                let prefix = self.lists.get(&k).map_or(&[][..], |l| l.prefix(s));
                buf.extend_from_slice(prefix);
                let mut first = prefix.is_empty();
                for m in &mops[..i] {
                    if let DrawnMop::Append(mk, v) | DrawnMop::Write(mk, v) = *m {
                        if mk == k {
                            if !first {
                                buf.push(b' ');
                            }
                            push_u64(buf, v);
                            first = false;
                        }
                    }
                }
                buf.extend_from_slice(b"]]");
            }
        }
    }
}
