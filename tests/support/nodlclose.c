/*
 * Test-only shim for sanitizer runs: makes dlclose() a no-op so that the MPI
 * library's plugins stay mapped at exit and LeakSanitizer can symbolize (and
 * so suppress, see tests/lsan.supp) the allocations they never free. Without
 * it their stacks show as "<unknown module>" and cannot be told apart from
 * leaks in tuna.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
