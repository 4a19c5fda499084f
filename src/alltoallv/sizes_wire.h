/*
 * Announced block sizes (metadata messages) on the wire, one format for every alltoallv
 * algorithm that announces them (two-phase Bruck, TuNA, hierarchical TuNA): a header byte
 * w in {0, 1, 2, 4, 8}, then the cnt sizes in w bytes each, little-endian; w is the
 * narrowest width that holds the largest size (0: all are 0, the message is the header).
 * At small blocks this is up to 8x fewer bytes than uint64 words, which matters where the
 * metadata shares links with the data (docs/results/simulation-gap.md, "The gap to the attainable
 * bound"); the header lets a receiver decode without the message's length (TuNA's receives
 * land side by side in one buffer, with no status each). The receiver, who knows cnt, posts
 * TUNA_SIZES_BYTES(cnt) bytes of MPI_BYTE and decodes what arrived. The cost model prices
 * this length (model.c, meta_bytes).
 */
#ifndef TUNA_SIZES_WIRE_H
#define TUNA_SIZES_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes cnt sizes take on the wire (every size 8 bytes wide). */
#define TUNA_SIZES_BYTES(cnt) (1 + 8 * (size_t)(cnt))

/* Encode sizes[0..cnt) into out (TUNA_SIZES_BYTES(cnt) bytes of room); returns the length.
 * out may be the sizes' own storage, (unsigned char *)sizes, if it has that room (encoded
 * in place); otherwise the two do not overlap. */
size_t tuna_sizes_encode(const uint64_t *sizes, size_t cnt, unsigned char *out);
/* Decode cnt sizes from the len bytes at in (what arrived, or the receive buffer's room when
 * the length is unknown) into sizes (not overlapping in). MPI_ERR_INTERN with a message
 * naming `who` when the header is no width or the sizes would reach past len: nothing is
 * read outside in[0..len). */
int tuna_sizes_decode(const unsigned char *in, size_t len, size_t cnt, uint64_t *sizes,
                      const char *who);

#endif /* TUNA_SIZES_WIRE_H */
