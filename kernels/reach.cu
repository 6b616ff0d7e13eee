// Windowed bit-matrix reachability for pruning (isolde, src/accel).
//
// Nodes of the begin/commit graph are numbered in a topological order; the
// row of the node at position p is `words` 64-bit words, bit d (1 <= d <
// 64*words) set when p reaches position p + d. The host (src/accel/gpu.rs)
// launches `closure_level` once per level (levels ascending: a level's rows
// depend only on lower levels), `test_sides` once per pruning round, and
// `insert_edge` once per derived edge when the closure is updated in place.
// src/accel/bitreach.rs is the CPU mirror: the same formulas, rayon over
// rows instead of one thread per word, bit for bit the same rows.
//
// Every thread computes one word: the word formula below is
// bitreach::row_word.

typedef unsigned long long u64;
typedef unsigned int u32;

// Word j of src shifted left by d bits, ORed with bit d itself.
__device__ __forceinline__ u64 row_word(const u64* src, u32 d, u32 j) {
    u32 ws = d >> 6, bs = d & 63;
    if (j < ws) return 0;
    u64 w = src[j - ws] << bs;
    if (bs != 0 && j > ws) w |= src[j - ws - 1] >> (64 - bs);
    if (j == ws) w |= 1ull << bs;
    return w;
}

// Fills the rows of one level: thread t computes word t % words of the row
// of position level_nodes[t / words] as the OR over its successors q
// (positions, within the window) of row q shifted by q - p, plus bit q - p.
extern "C" __global__ void closure_level(u64* rows, const u32* offsets, const u32* targets,
                                         const u32* level_nodes, u32 level_len, u32 words) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)level_len * words) return;
    u32 i = (u32)(t / words), j = (u32)(t % words);
    u32 p = level_nodes[i];
    u64 acc = 0;
    for (u32 e = offsets[p]; e < offsets[p + 1]; e++) {
        u32 q = targets[e];
        acc |= row_word(rows + (u64)q * words, q - p, j);
    }
    rows[(u64)p * words + j] = acc;
}

// The constraint test: side i is the pairs pairs[2k], pairs[2k+1] for k in
// side_ptr[i] .. side_ptr[i+1], each an edge (a, b) of the side; out[i] is
// the index within the side of the first edge whose target b reaches its
// source a, or 0xffffffff.
extern "C" __global__ void test_sides(const u64* rows, u32 words, const u32* side_ptr, const u32* pairs,
                                      u32 sides, u32* out) {
    u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= sides) return;
    u32 r = 0xffffffffu;
    u64 width = (u64)words * 64;
    for (u32 k = side_ptr[i]; k < side_ptr[i + 1]; k++) {
        u32 a = pairs[2 * k], b = pairs[2 * k + 1];
        if (a > b) {
            u64 d = a - b;
            if (d < width && ((rows[(u64)b * words + (d >> 6)] >> (d & 63)) & 1)) {
                r = k - side_ptr[i];
                break;
            }
        }
    }
    out[i] = r;
}

// Adds the edge s -> d (positions, s < d, d - s < 64*words): thread t
// updates word t % words of row u = lo + t / words (lo .. s): when u is s or
// reaches s, it ORs in row d shifted by d - u. Bit s - u is below every bit
// written (they are at distances >= d - u), and row d is never written
// (d > s >= u), so threads of one launch do not interfere.
extern "C" __global__ void insert_edge(u64* rows, u32 words, u32 lo, u32 s, u32 d) {
    u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)(s - lo + 1) * words) return;
    u32 u = lo + (u32)(t / words), j = (u32)(t % words);
    u64* row = rows + (u64)u * words;
    u32 to_s = s - u;
    if (to_s != 0 && !((row[to_s >> 6] >> (to_s & 63)) & 1)) return;
    row[j] |= row_word(rows + (u64)d * words, d - u, j);
}
