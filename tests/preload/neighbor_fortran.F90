! Fortran neighborhood all-to-all under the preload (issue 52): MPI_NEIGHBOR_ALLTOALL,
! MPI_NEIGHBOR_ALLTOALLV, MPI_INEIGHBOR_ALLTOALL and MPI_INEIGHBOR_ALLTOALLV (completed by
! MPI_WAIT) and a persistent MPI_NEIGHBOR_ALLTOALLV_INIT (Open MPI 4.1: MPIX_) started twice,
! on a non-periodic Cartesian line. Receive buffers are sentinel-filled with gaps and compared
! exactly with what each neighbor sent (the borders' blocks keep their sentinels); the caller
! checks in the statistics that tuna's rows ran each call. Compiled twice: `use mpi` and
! (TUNA_F08) `use mpi_f08` without ierror.
#ifdef TUNA_F08
#define MPI_MODULE mpi_f08
#define EXT_MODULE mpi_f08_ext
#define REQUEST_T type(MPI_Request)
#define COMM_T type(MPI_Comm)
#define IE
#define IE0
#else
#define MPI_MODULE mpi
#define EXT_MODULE mpi_ext
#define REQUEST_T integer
#define COMM_T integer
#define IE , ierr
#define IE0 ierr
#endif
#ifdef TUNA_MPIX
#define NBR_INIT MPIX_Neighbor_alltoallv_init
#else
#define NBR_INIT MPI_Neighbor_alltoallv_init
#endif
program neighbor_fortran
  use MPI_MODULE
#ifdef TUNA_MPIX
  use EXT_MODULE
#endif
  implicit none
  integer, parameter :: K = 2, SENTINEL = -7
  integer :: me, np, ierr, nerr, round, src, dst
  integer :: dims(1), nbr(2)
  logical :: periods(1)
  COMM_T :: line
  REQUEST_T :: req
  integer :: scount(2), sdispl(2), rcount(2), rdispl(2)
  integer, asynchronous :: sbuf(2*K), rbuf(2*K + 1), vsend(8), vrecv(8)

  ierr = 0
  nerr = 0
  call MPI_Init(IE0)
  call MPI_Comm_rank(MPI_COMM_WORLD, me IE)
  call MPI_Comm_size(MPI_COMM_WORLD, np IE)
  dims(1) = np
  periods(1) = .false.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., line IE)
  call MPI_Cart_shift(line, 0, 1, src, dst IE)
  nbr(1) = src   ! block 1: towards -1
  nbr(2) = dst   ! block 2: towards +1

  ! uniform: K ints per neighbor, value 100*rank + 10*block + element
  do round = 0, 1
     call fill_uniform()
     if (round == 0) then
        call MPI_Neighbor_alltoall(sbuf, K, MPI_INTEGER, rbuf, K, MPI_INTEGER, line IE)
     else
        call MPI_Ineighbor_alltoall(sbuf, K, MPI_INTEGER, rbuf, K, MPI_INTEGER, line, req IE)
        call MPI_Wait(req, MPI_STATUS_IGNORE IE)
     end if
     call check_uniform(round)
  end do

  ! alltoallv: 1 int towards -1, 2 towards +1; receive blocks reversed, a gap after each
  scount = (/ 1, 2 /)
  sdispl = (/ 0, 1 /)
  rcount = (/ 2, 1 /)      ! from -1: what it sends towards +1; from +1: towards -1
  rdispl = (/ 4, 1 /)
  do round = 0, 3
     call fill_v()
     if (round == 0) then
        call MPI_Neighbor_alltoallv(vsend, scount, sdispl, MPI_INTEGER, vrecv, rcount, rdispl, &
                                    MPI_INTEGER, line IE)
     else if (round == 1) then
        call MPI_Ineighbor_alltoallv(vsend, scount, sdispl, MPI_INTEGER, vrecv, rcount, rdispl, &
                                     MPI_INTEGER, line, req IE)
        call MPI_Wait(req, MPI_STATUS_IGNORE IE)
     else
        if (round == 2) call NBR_INIT(vsend, scount, sdispl, MPI_INTEGER, vrecv, rcount, &
                                      rdispl, MPI_INTEGER, line, MPI_INFO_NULL, req IE)
        call MPI_Start(req IE)
        call MPI_Wait(req, MPI_STATUS_IGNORE IE)
     end if
     call check_v(round)
  end do
  call MPI_Request_free(req IE)
  call MPI_Comm_free(line IE)

  call MPI_Allreduce(MPI_IN_PLACE, nerr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IE)
  if (me == 0) print '(a, i0, a, i0)', 'neighbor_fortran: P = ', np, ', failures: ', nerr
  call MPI_Finalize(IE0)
  if (nerr /= 0) stop 1

contains

  subroutine fill_uniform()
    integer :: b, e
    do b = 1, 2
       do e = 1, K
          sbuf((b - 1)*K + e) = 100*me + 10*b + e
       end do
    end do
    rbuf = SENTINEL
  end subroutine

  subroutine check_uniform(round)
    integer, intent(in) :: round
    integer :: b, e, want
    do b = 1, 2
       do e = 1, K
          ! block 1 comes from -1, which sent its block 2 (towards +1), and the reverse
          if (nbr(b) == MPI_PROC_NULL) then
             want = SENTINEL
          else
             want = 100*nbr(b) + 10*(3 - b) + e
          end if
          if (rbuf((b - 1)*K + e) /= want) call bad('uniform', round, want, rbuf((b - 1)*K + e))
       end do
    end do
    if (rbuf(2*K + 1) /= SENTINEL) call bad('uniform guard', round, SENTINEL, rbuf(2*K + 1))
  end subroutine

  subroutine fill_v()
    integer :: i
    do i = 1, 3
       vsend(i) = 1000*me + 100*round + i
    end do
    vrecv = SENTINEL
  end subroutine

  subroutine check_v(round)
    integer, intent(in) :: round
    integer :: want(8), i
    want = SENTINEL
    ! from -1 (rdispl 4, 2 ints): its elements 2..3 (sent towards +1); from +1 (rdispl 1,
    ! 1 int): its element 1
    if (nbr(1) /= MPI_PROC_NULL) then
       want(5) = 1000*nbr(1) + 100*round + 2
       want(6) = 1000*nbr(1) + 100*round + 3
    end if
    if (nbr(2) /= MPI_PROC_NULL) want(2) = 1000*nbr(2) + 100*round + 1
    do i = 1, 8
       if (vrecv(i) /= want(i)) call bad('alltoallv', round, want(i), vrecv(i))
    end do
  end subroutine

  subroutine bad(what, round, want, got)
    character(*), intent(in) :: what
    integer, intent(in) :: round, want, got
    nerr = nerr + 1
    if (nerr <= 10) print '(a, i0, a, a, a, i0, a, i0, a, i0)', 'rank ', me, ': ', what, &
         ' round ', round, ': expected ', want, ', got ', got
  end subroutine
end program
