/* A fixture of tests/check_transport_seam.sh (test transport_seam_catches_direct_calls): an
 * algorithm file that bypasses the transport, which the check must report. Never compiled. */
static void bypass(char *dst, const char *src, MPI_Request *req)
{
    memcpy(dst, src, 1);
    MPI_Isend(src, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, req);
}
