! Fortran MPI_ALLTOALLW, MPI_IALLTOALLW and (TUNA_W_INIT) the persistent MPI_ALLTOALLW_INIT
! (Open MPI 4.1: MPIX_) under the preload: rank i sends mod(i + j, 3) + 1 integers to rank j,
! block j at byte 16 j (gaps between blocks), send types MPI_INTEGER, receive types MPI_INTEGER
! and a one-integer derived type by turns (tuna's packed way). Each call's receive buffer is
! sentinel-filled and compared exactly with the reference, gaps included; the persistent
! request is started three times with the send buffer rewritten in between.
! Compiled twice: `use mpi` and (TUNA_F08) `use mpi_f08` without ierror.
#ifdef TUNA_F08
#define MPI_MODULE mpi_f08
#define EXT_MODULE mpi_f08_ext
#define TYPE_T type(MPI_Datatype)
#define REQUEST_T type(MPI_Request)
#define IE
#define IE0
#else
#define MPI_MODULE mpi
#define EXT_MODULE mpi_ext
#define TYPE_T integer
#define REQUEST_T integer
#define IE , ierr
#define IE0 ierr
#endif
#ifdef TUNA_MPIX
#define ALLTOALLW_INIT MPIX_Alltoallw_init
#else
#define ALLTOALLW_INIT MPI_Alltoallw_init
#endif
program alltoallw_fortran
  use MPI_MODULE
#if defined(TUNA_MPIX) && defined(TUNA_W_INIT)
  use EXT_MODULE
#endif
  implicit none
  integer :: me, np, j, s, ierr, nerr, total
  integer, allocatable :: scount(:), sdispl(:), rcount(:), rdispl(:)
  integer, allocatable, asynchronous :: sbuf(:), rbuf(:)
  TYPE_T, allocatable :: stype(:), rtype(:)
  TYPE_T :: one
  REQUEST_T :: req

  ierr = 0
  call MPI_Init(IE0)
  call MPI_Comm_rank(MPI_COMM_WORLD, me IE)
  call MPI_Comm_size(MPI_COMM_WORLD, np IE)
  allocate(scount(0:np-1), sdispl(0:np-1), rcount(0:np-1), rdispl(0:np-1))
  allocate(stype(0:np-1), rtype(0:np-1), sbuf(0:4*np), rbuf(0:4*np))
  call MPI_Type_contiguous(1, MPI_INTEGER, one IE)
  call MPI_Type_commit(one IE)
  do j = 0, np - 1
     scount(j) = mod(me + j, 3) + 1
     rcount(j) = mod(j + me, 3) + 1
     sdispl(j) = 16*j
     rdispl(j) = 16*j
     stype(j) = MPI_INTEGER
     if (mod(j, 2) == 1) then
        rtype(j) = one
     else
        rtype(j) = MPI_INTEGER
     end if
  end do
  nerr = 0

  ! form 0: MPI_ALLTOALLW; form 1: MPI_IALLTOALLW and MPI_WAIT
  call fill(0)
  call MPI_Alltoallw(sbuf, scount, sdispl, stype, rbuf, rcount, rdispl, rtype, MPI_COMM_WORLD IE)
  call check(0)
  call fill(1)
  call MPI_Ialltoallw(sbuf, scount, sdispl, stype, rbuf, rcount, rdispl, rtype, MPI_COMM_WORLD, &
                      req IE)
  call MPI_Wait(req, MPI_STATUS_IGNORE IE)
  call check(1)
#ifdef TUNA_W_INIT
  ! the persistent form: three starts, the send buffer rewritten before each
  call ALLTOALLW_INIT(sbuf, scount, sdispl, stype, rbuf, rcount, rdispl, rtype, MPI_COMM_WORLD, &
                      MPI_INFO_NULL, req IE)
  do s = 2, 4
     call fill(s)
     call MPI_Start(req IE)
     call MPI_Wait(req, MPI_STATUS_IGNORE IE)
     call check(s)
  end do
  call MPI_Request_free(req IE)
#endif
  call MPI_Type_free(one IE)
  call MPI_Allreduce(nerr, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IE)
  if (me == 0) print '(a, i0, a, i0)', 'alltoallw_fortran P=', np, ': failures ', total
  call MPI_Finalize(IE0)
  if (total /= 0) stop 1

contains

  integer function val(from, to, k, s)
    integer, intent(in) :: from, to, k, s
    val = 1000*from + 100*to + 10*k + s
  end function val

  subroutine fill(s)
    integer, intent(in) :: s
    integer :: j, k
    sbuf = -1
    do j = 0, np - 1
       do k = 0, scount(j) - 1
          sbuf(4*j + k) = val(me, j, k, s)
       end do
    end do
    rbuf = -7
  end subroutine fill

  subroutine check(s)
    integer, intent(in) :: s
    integer :: j, k, want
    do j = 0, np - 1
       do k = 0, 3
          want = -7
          if (k < rcount(j)) want = val(j, me, k, s)
          if (rbuf(4*j + k) /= want) nerr = nerr + 1
       end do
    end do
    if (rbuf(4*np) /= -7) nerr = nerr + 1
    if (nerr /= 0) print '(a, i0, a, i0, a, i0)', 'rank ', me, ' form ', s, ': wrong ', nerr
  end subroutine check

end program alltoallw_fortran
