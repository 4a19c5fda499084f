/*
 * Datatype helpers: contiguity test, packing of whole blocks (any count, by
 * chunks so MPI's int positions never overflow).
 */
#include "tuna_internal.h"

#include <stdint.h>

#include <limits.h>
#include <string.h>

bool tuna_type_is_contiguous(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return false;
    if (combiner == MPI_COMBINER_NAMED) {
        /* Pair types such as MPI_DOUBLE_INT carry padding (size 12, extent 16). */
        MPI_Aint lb, ext;
        int size;
        PMPI_Type_get_extent(type, &lb, &ext);
        PMPI_Type_size(type, &size);
        return lb == 0 && ext == size;
    }
    if (combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP)
        return false;
    /* One level down: the old type must be contiguous and tile without gaps. */
    int ints[1] = {0};
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    if (ni > 1 || na > 1 || nd != 1)
        return false;
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, types) != MPI_SUCCESS)
        return false;
    MPI_Datatype old = types[0];
    bool ok = tuna_type_is_contiguous(old);
    MPI_Aint lb, ext;
    int size;
    PMPI_Type_get_extent(old, &lb, &ext);
    PMPI_Type_size(old, &size);
    ok = ok && lb == 0 && ext == size;
    int oni, ona, ond, ocomb;
    PMPI_Type_get_envelope(old, &oni, &ona, &ond, &ocomb);
    if (ocomb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&old);
    return ok;
}

/*
 * Predefined types are never freed, so their handles can key a cache; derived types' handles
 * may be reused for other types after MPI_Type_free, so they are inspected on every call.
 */
#define TYPE_CACHE 8
static _Thread_local struct {
    MPI_Datatype type;
    tuna_type_info info;
    bool used;
} type_cache[TYPE_CACHE];
static _Thread_local int type_cache_next;

int tuna_type_info_get(MPI_Datatype type, tuna_type_info *out)
{
    for (int i = 0; i < TYPE_CACHE; i++)
        if (type_cache[i].used && type_cache[i].type == type) {
            *out = type_cache[i].info;
            return MPI_SUCCESS;
        }
    int size, ni, na, nd, combiner;
    TUNA_MPI_CHECK(PMPI_Type_size(type, &size));
    TUNA_MPI_CHECK(PMPI_Type_get_extent(type, &out->lb, &out->extent));
    TUNA_MPI_CHECK(PMPI_Type_get_true_extent(type, &out->true_lb, &out->true_extent));
    out->size = (size_t)size;
    TUNA_MPI_CHECK(PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner));
    /* A named type is contiguous exactly when it has no padding (tuna_type_is_contiguous's
     * rule, from the values at hand); derived types are walked. */
    out->contig = combiner == MPI_COMBINER_NAMED
                      ? out->lb == 0 && out->extent == (MPI_Aint)size
                      : tuna_type_is_contiguous(type);
    out->named = combiner == MPI_COMBINER_NAMED;
    if (combiner == MPI_COMBINER_NAMED) {
        type_cache[type_cache_next].type = type;
        type_cache[type_cache_next].info = *out;
        type_cache[type_cache_next].used = true;
        type_cache_next = (type_cache_next + 1) % TYPE_CACHE;
    }
    return MPI_SUCCESS;
}

/* Elements per MPI_Pack call so that the packed bytes fit an int. */
static int chunk_elems(size_t size)
{
    size_t n = size ? (size_t)INT_MAX / size : (size_t)INT_MAX;
    return n > (size_t)INT_MAX ? INT_MAX : (n ? (int)n : 1);
}

/*
 * MPICH 4.0.2's MPI_Pack and MPI_Unpack reject a NULL buffer even when it is MPI_BOTTOM (a
 * type of absolute addresses, which MPI allows): such a block is packed from a non-NULL
 * anchor with the type shifted back by the anchor's address, the same bytes.
 */
static int bottom_type(int n, MPI_Datatype type, MPI_Datatype *shifted, uintptr_t *base)
{
    static const char anchor;
    MPI_Aint a;
    TUNA_MPI_CHECK(PMPI_Get_address(&anchor, &a));
    MPI_Aint disp = -a;
    TUNA_MPI_CHECK(PMPI_Type_create_hindexed(1, &n, &disp, type, shifted));
    int rc = PMPI_Type_commit(shifted);
    if (rc != MPI_SUCCESS) {
        PMPI_Type_free(shifted);
        return tuna_error_set(rc, "MPI_Type_commit of an MPI_BOTTOM block failed");
    }
    *base = (uintptr_t)&anchor;
    return MPI_SUCCESS;
}

/* One MPI_Pack (pack) or MPI_Unpack (!pack) of n elements at the typed address `at`. */
static int pack_chunk(bool pack, uintptr_t at, int n, MPI_Datatype type, char *packed,
                      int bytes, MPI_Comm comm)
{
    const bool bottom = !at; /* then one element of the shifted type covers all n */
    MPI_Datatype t = type;
    int pos = 0, rc;
    if (bottom && (rc = bottom_type(n, type, &t, &at)) != MPI_SUCCESS)
        return rc;
    rc = pack ? PMPI_Pack((const void *)at, bottom ? 1 : n, t, packed, bytes, &pos, comm)
              : PMPI_Unpack(packed, bytes, &pos, (void *)at, bottom ? 1 : n, t, comm);
    if (bottom)
        PMPI_Type_free(&t);
    return rc == MPI_SUCCESS ? rc
                             : tuna_error_set(rc, "%s of %d elements failed",
                                              pack ? "MPI_Pack" : "MPI_Unpack", n);
}

int tuna_pack_block(const void *in, MPI_Count count, MPI_Datatype type, MPI_Aint extent,
                    size_t size, void *out, MPI_Comm comm)
{
    char *dst = out;
    int step = chunk_elems(size);
    for (MPI_Count done = 0; done < count;) {
        int n = count - done < step ? (int)(count - done) : step;
        int rc = pack_chunk(true, (uintptr_t)in + (uintptr_t)((MPI_Aint)done * extent), n, type,
                            dst, (int)((size_t)n * size), comm);
        if (rc != MPI_SUCCESS)
            return rc;
        dst += (size_t)n * size;
        done += n;
    }
    return MPI_SUCCESS;
}

int tuna_unpack_block(const void *in, void *out, MPI_Count count, MPI_Datatype type,
                      MPI_Aint extent, size_t size, MPI_Comm comm)
{
    const char *src = in;
    int step = chunk_elems(size);
    for (MPI_Count done = 0; done < count;) {
        int n = count - done < step ? (int)(count - done) : step;
        int rc = pack_chunk(false, (uintptr_t)out + (uintptr_t)((MPI_Aint)done * extent), n,
                            type, (char *)src, (int)((size_t)n * size), comm);
        if (rc != MPI_SUCCESS)
            return rc;
        src += (size_t)n * size;
        done += n;
    }
    return MPI_SUCCESS;
}

int tuna_message_type(MPI_Count count, MPI_Datatype type, MPI_Aint extent, int *n,
                      MPI_Datatype *msg, bool *made)
{
    *made = false;
    if (count <= INT_MAX) {
        *n = (int)count;
        *msg = type;
        return MPI_SUCCESS;
    }
    /* Whole chunks of 2^30 elements plus a remainder: every count an int. */
    const MPI_Count chunk = (MPI_Count)1 << 30;
    MPI_Datatype c;
    TUNA_MPI_CHECK(PMPI_Type_contiguous((int)chunk, type, &c));
    int lens[2] = {(int)(count / chunk), (int)(count % chunk)};
    MPI_Aint disps[2] = {0, (MPI_Aint)(count / chunk * chunk) * extent};
    MPI_Datatype types[2] = {c, type};
    int rc = PMPI_Type_create_struct(2, lens, disps, types, msg);
    PMPI_Type_free(&c);
    if (rc == MPI_SUCCESS && (rc = PMPI_Type_commit(msg)) != MPI_SUCCESS)
        PMPI_Type_free(msg);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "a message type of %lld elements could not be built",
                              (long long)count);
    *n = 1;
    *made = true;
    return MPI_SUCCESS;
}
