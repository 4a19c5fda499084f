! Fortran nonblocking and persistent collectives under the preload (issue 35): each round
! starts MPI_IALLTOALLV, MPI_IALLTOALL, MPI_IALLGATHER, MPI_IALLREDUCE (in place in odd
! rounds) and a persistent alltoallv (MPI_ALLTOALLV_INIT, Open MPI 4.1: MPIX_) in one request
! array with point-to-point requests (MPI_IRECV and MPI_ISEND around a ring, a persistent
! MPI_RECV_INIT; MPI_START or MPI_STARTALL), and completes them with one of MPI_WAIT,
! MPI_TEST loops, MPI_WAITALL, MPI_TESTALL, MPI_WAITANY, MPI_TESTANY, MPI_WAITSOME,
! MPI_TESTSOME or MPI_REQUEST_GET_STATUS; then MPI_REQUEST_FREE of the persistent requests and
! an MPI_CANCEL'led receive. Received data (sentinel-filled buffers, gaps) are compared exactly
! with a reference computed here, so are the receives' statuses and the requests written back,
! and MPI_STATUS(ES)_IGNORE must stay untouched.
! Compiled twice: `use mpi` and (TUNA_F08) `use mpi_f08` without ierror.
#ifdef TUNA_F08
#define MPI_MODULE mpi_f08
#define EXT_MODULE mpi_f08_ext
#define REQUEST_T type(MPI_Request)
#define STATUS_T type(MPI_Status)
#define STATUSES_T type(MPI_Status), dimension(NREQ)
#define STS(k) sts(k)
#define IGNORE_TAG MPI_STATUS_IGNORE%MPI_TAG
#define IGNORES_TAG MPI_STATUSES_IGNORE(1)%MPI_TAG
#define IE
#define IE0
#else
#define MPI_MODULE mpi
#define EXT_MODULE mpi_ext
#define REQUEST_T integer
#define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#define STATUSES_T integer, dimension(MPI_STATUS_SIZE, NREQ)
#define STS(k) sts(:, k)
#define IGNORE_TAG MPI_STATUS_IGNORE(MPI_TAG)
#define IGNORES_TAG MPI_STATUSES_IGNORE(MPI_TAG, 1)
#define IE , ierr
#define IE0 ierr
#endif
#if defined(TUNA_MPICH) && !defined(TUNA_F08)
! MPICH 4.0.2's mpif.h / `use mpi` MPI_WAITANY and MPI_TESTANY add 1 to MPI_UNDEFINED too.
#define UNDEFINED_INDEX (MPI_UNDEFINED + 1)
#else
#define UNDEFINED_INDEX MPI_UNDEFINED
#endif
#ifdef TUNA_MPIX
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#else
#define ALLTOALLV_INIT MPI_Alltoallv_init
#endif
program nonblocking_mixed
  use MPI_MODULE
#ifdef TUNA_MPIX
  use EXT_MODULE
#endif
  implicit none
  integer, parameter :: NREQ = 9, NROUND = 10, COMM_TAG = 10, PERS_TAG = 99
  integer :: me, np, left, right, ierr, nerr, m, i, j, k, n, idx, outcount, stot, rtot
  logical :: flag, done(NREQ)
  integer, allocatable :: scount(:), sdispl(:), rcount(:), rdispl(:)
  integer, allocatable :: vref(:)
  ! buffers of nonblocking calls: changed behind the compiler's back until their completion
  integer, allocatable, asynchronous :: vsend(:), vrecv(:), psend(:), precv(:)
  integer, allocatable, asynchronous :: asend(:), arecv(:), gsend(:), grecv(:)
  integer, asynchronous :: rsend(0:3), rrecv(0:4), p2p_in, p2p_out, pers_in, pers_out
  integer, asynchronous :: cancel_buf
  integer :: idxs(NREQ)
  REQUEST_T :: req(NREQ), pair(2), coll_plan, recv_plan, creq
  STATUS_T :: st
  STATUSES_T :: sts

  ierr = 0
  call MPI_Init(IE0)
  call MPI_Comm_rank(MPI_COMM_WORLD, me IE)
  call MPI_Comm_size(MPI_COMM_WORLD, np IE)
  left = mod(me + np - 1, np)
  right = mod(me + 1, np)
  nerr = 0

  ! alltoallv layout: counts 0..3, send blocks in rank order, receive blocks in reverse rank
  ! order, a gap of one element after each (must keep its sentinel).
  allocate(scount(0:np-1), sdispl(0:np-1), rcount(0:np-1), rdispl(0:np-1))
  stot = 0
  do j = 0, np - 1
     scount(j) = mod(me + 2*j, 4)
     sdispl(j) = stot
     stot = stot + scount(j) + 1
     rcount(j) = mod(j + 2*me, 4)
  end do
  rtot = 0
  do j = np - 1, 0, -1
     rdispl(j) = rtot
     rtot = rtot + rcount(j) + 1
  end do
  allocate(vsend(0:stot), psend(0:stot), vrecv(0:rtot), precv(0:rtot), vref(0:rtot))
  allocate(asend(0:2*np-1), arecv(0:2*np), gsend(0:2), grecv(0:3*np))

  ! The persistent requests: tuna's plan (its init also sets MPI_COMM_WORLD up for tuna) and
  ! a point-to-point receive.
  call ALLTOALLV_INIT(psend, scount, sdispl, MPI_INTEGER, precv, rcount, rdispl, MPI_INTEGER, &
                      MPI_COMM_WORLD, MPI_INFO_NULL, coll_plan IE)
  call MPI_Recv_init(pers_in, 1, MPI_INTEGER, left, PERS_TAG, MPI_COMM_WORLD, recv_plan IE)

  do m = 1, NROUND
     ! send data of this round, sentinels in every receive buffer
     vsend = -1
     psend = -1
     do j = 0, np - 1
        do k = 0, scount(j) - 1
           vsend(sdispl(j) + k) = val(me, j, k, m, 0)
           psend(sdispl(j) + k) = val(me, j, k, m, 500)
        end do
        asend(2*j) = val(me, j, 0, m, 7)
        asend(2*j + 1) = val(me, j, 1, m, 7)
     end do
     do k = 0, 2
        gsend(k) = val(me, 0, k, m, 3)
     end do
     vrecv = -7
     precv = -7
     arecv = -7
     grecv = -7
     rrecv = -7
     pers_in = -7
     p2p_in = -7
     do k = 0, 3
        rsend(k) = (me + 1)*(k + 1) + m
     end do

     call MPI_Irecv(p2p_in, 1, MPI_INTEGER, left, COMM_TAG + m, MPI_COMM_WORLD, req(1) IE)
     call MPI_Ialltoallv(vsend, scount, sdispl, MPI_INTEGER, vrecv, rcount, rdispl, &
                         MPI_INTEGER, MPI_COMM_WORLD, req(2) IE)
     p2p_out = 7000 + 10*me + m
     call MPI_Isend(p2p_out, 1, MPI_INTEGER, right, COMM_TAG + m, MPI_COMM_WORLD, req(3) IE)
     call MPI_Ialltoall(asend, 2, MPI_INTEGER, arecv, 2, MPI_INTEGER, MPI_COMM_WORLD, &
                        req(4) IE)
     call MPI_Iallgather(gsend, 3, MPI_INTEGER, grecv, 3, MPI_INTEGER, MPI_COMM_WORLD, &
                         req(5) IE)
     if (mod(m, 2) == 0) then
        pair(1) = coll_plan
        pair(2) = recv_plan
        call MPI_Startall(2, pair IE)
        req(6) = pair(1)
        req(8) = pair(2)
     else
        req(6) = coll_plan
        req(8) = recv_plan
        call MPI_Start(req(6) IE)
        call MPI_Start(req(8) IE)
     end if
     if (mod(m, 2) == 1) then
        rrecv(0:3) = rsend
        call MPI_Iallreduce(MPI_IN_PLACE, rrecv, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                            req(7) IE)
     else
        call MPI_Iallreduce(rsend, rrecv, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req(7) IE)
     end if
     pers_out = 9000 + 10*me + m
     call MPI_Isend(pers_out, 1, MPI_INTEGER, right, PERS_TAG, MPI_COMM_WORLD, req(9) IE)

     done = .false.
     select case (m)
     case (1)   ! MPI_WAIT on each, with a status
        do i = 1, NREQ
           call MPI_Wait(req(i), st IE)
           call check_status(st, i)
        end do
     case (2)   ! MPI_TEST loops, last request first, status ignored
        do i = NREQ, 1, -1
           flag = .false.
           do while (.not. flag)
              call MPI_Test(req(i), flag, MPI_STATUS_IGNORE IE)
           end do
        end do
     case (3)   ! MPI_WAITALL with statuses
        call MPI_Waitall(NREQ, req, sts IE)
        do i = 1, NREQ
           call check_status(STS(i), i)
        end do
     case (4)   ! MPI_TESTALL loops on two parts (the bindings copy up to 8 requests on the
                ! stack, more on the heap), statuses ignored
        flag = .false.
        do while (.not. flag)
           call MPI_Testall(4, req(1:4), flag, MPI_STATUSES_IGNORE IE)
        end do
        flag = .false.
        do while (.not. flag)
           call MPI_Testall(NREQ - 4, req(5:NREQ), flag, MPI_STATUSES_IGNORE IE)
        end do
     case (5)   ! MPI_WAITANY with a status, each request once, then MPI_UNDEFINED
        do k = 1, NREQ
           call MPI_Waitany(NREQ, req, idx, st IE)
           call mark(idx)
           if (idx >= 1 .and. idx <= NREQ) call check_status(st, idx)
        end do
        call MPI_Waitany(NREQ, req, idx, st IE)
        if (idx /= UNDEFINED_INDEX) call fail('MPI_WAITANY after all: index', idx)
     case (6)   ! MPI_TESTANY loop, status ignored
        n = 0
        do while (n < NREQ)
           call MPI_Testany(NREQ, req, idx, flag, MPI_STATUS_IGNORE IE)
           if (flag) then
              if (idx == UNDEFINED_INDEX) then
                 call fail('MPI_TESTANY: no active request left after', n)
                 exit
              end if
              call mark(idx)
              n = n + 1
           end if
        end do
     case (7)   ! MPI_WAITSOME with statuses
        n = 0
        do while (n < NREQ)
           call MPI_Waitsome(NREQ, req, outcount, idxs, sts IE)
           if (outcount == MPI_UNDEFINED .or. outcount < 1) then
              call fail('MPI_WAITSOME: outcount', outcount)
              exit
           end if
           do k = 1, outcount
              call mark(idxs(k))
              if (idxs(k) >= 1 .and. idxs(k) <= NREQ) call check_status(STS(k), idxs(k))
           end do
           n = n + outcount
        end do
     case (8)   ! MPI_TESTSOME loop, statuses ignored
        n = 0
        do while (n < NREQ)
           call MPI_Testsome(NREQ, req, outcount, idxs, MPI_STATUSES_IGNORE IE)
           if (outcount == MPI_UNDEFINED) then
              call fail('MPI_TESTSOME: no active request left after', n)
              exit
           end if
           do k = 1, outcount
              call mark(idxs(k))
           end do
           n = n + outcount
        end do
     case (9)   ! MPI_REQUEST_GET_STATUS until each is complete (not freed), then MPI_WAITALL
        do i = 1, NREQ
           flag = .false.
           do while (.not. flag)
              call MPI_Request_get_status(req(i), flag, st IE)
           end do
           call check_status(st, i)
        end do
        if (req(2) == MPI_REQUEST_NULL) call fail('MPI_REQUEST_GET_STATUS freed request', 2)
        call MPI_Waitall(NREQ, req, MPI_STATUSES_IGNORE IE)
     case default   ! MPI_WAITANY for one, MPI_WAIT for the others (statuses ignored)
        call MPI_Waitany(NREQ, req, idx, MPI_STATUS_IGNORE IE)
        call mark(idx)
        do i = 1, NREQ
           call MPI_Wait(req(i), MPI_STATUS_IGNORE IE)
        end do
     end select

     ! Requests written back: the nonpersistent ones freed, the persistent ones kept.
     do i = 1, NREQ
        if (i == 6 .or. i == 8) then
           if (req(i) == MPI_REQUEST_NULL) call fail('persistent request freed', i)
        else if (.not. (req(i) == MPI_REQUEST_NULL)) then
           call fail('completed request not MPI_REQUEST_NULL', i)
        end if
     end do
     call check_round(m)
     ! The sentinels are zero-filled common blocks: a status written into one shows its tag.
     if (IGNORE_TAG /= 0 .or. IGNORES_TAG /= 0) call fail('status written into a sentinel', m)
  end do

  call MPI_Request_free(coll_plan IE)
  call MPI_Request_free(recv_plan IE)
  if (.not. (coll_plan == MPI_REQUEST_NULL)) call fail('MPI_REQUEST_FREE: plan', 1)
  if (.not. (recv_plan == MPI_REQUEST_NULL)) call fail('MPI_REQUEST_FREE: receive', 1)
  ! MPI_CANCEL of a receive nobody matches: the cancelled status comes back through MPI_WAIT.
  call MPI_Irecv(cancel_buf, 1, MPI_INTEGER, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, creq IE)
  call MPI_Cancel(creq IE)
  call MPI_Wait(creq, st IE)
  call MPI_Test_cancelled(st, flag IE)
  if (.not. flag) call fail('MPI_CANCEL: not cancelled', 0)

  call MPI_Allreduce(MPI_IN_PLACE, nerr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD IE)
  if (me == 0) print '(a,i0,a,i0,a)', 'nonblocking_mixed: ', nerr, ' errors on ', np, ' ranks'
  call MPI_Finalize(IE0)
  if (nerr /= 0) stop 1

contains

  ! What rank a sends rank b, element k, in round m (salt: which collective).
  integer function val(a, b, k, m, salt)
    integer, intent(in) :: a, b, k, m, salt
    val = 100000*m + 1000*a + 10*b + k + salt
  end function val

  subroutine fail(what, v)
    character(len=*), intent(in) :: what
    integer, intent(in) :: v
    print '(a,i0,a,i0,a,a,a,i0)', 'rank ', me, ' round ', m, ': ', what, ' ', v
    nerr = nerr + 1
  end subroutine fail

  ! A completed index from MPI_WAITANY etc.: in range, and each request once per round.
  subroutine mark(i)
    integer, intent(in) :: i
    if (i < 1 .or. i > NREQ) then
       call fail('index out of range', i)
    else if (done(i)) then
       call fail('index completed twice', i)
    else
       done(i) = .true.
    end if
  end subroutine mark

  ! The receives' statuses (request 1: the ring's MPI_IRECV, 8: the persistent receive).
  subroutine check_status(s, i)
    STATUS_T, intent(in) :: s
    integer, intent(in) :: i
    integer :: src, tag
#ifdef TUNA_F08
    src = s%MPI_SOURCE
    tag = s%MPI_TAG
#else
    src = s(MPI_SOURCE)
    tag = s(MPI_TAG)
#endif
    if (i == 1 .and. (src /= left .or. tag /= COMM_TAG + m)) call fail('MPI_IRECV status', src)
    if (i == 8 .and. (src /= left .or. tag /= PERS_TAG)) call fail('MPI_RECV_INIT status', src)
  end subroutine check_status

  subroutine check_round(m)
    integer, intent(in) :: m
    integer :: j, k, bad
    if (p2p_in /= 7000 + 10*left + m) call fail('MPI_IRECV data', p2p_in)
    if (pers_in /= 9000 + 10*left + m) call fail('MPI_RECV_INIT data', pers_in)
    ! alltoallv (nonblocking and persistent): the blocks, the gaps untouched
    vref = -7
    do j = 0, np - 1
       do k = 0, rcount(j) - 1
          vref(rdispl(j) + k) = val(j, me, k, m, 0)
       end do
    end do
    bad = count(vrecv /= vref)
    if (bad /= 0) call fail('MPI_IALLTOALLV wrong elements', bad)
    where (vref /= -7) vref = vref + 500
    bad = count(precv /= vref)
    if (bad /= 0) call fail('persistent alltoallv wrong elements', bad)
    bad = 0
    do j = 0, np - 1
       do k = 0, 1
          if (arecv(2*j + k) /= val(j, me, k, m, 7)) bad = bad + 1
       end do
       do k = 0, 2
          if (grecv(3*j + k) /= val(j, 0, k, m, 3)) bad = bad + 1
       end do
    end do
    if (arecv(2*np) /= -7 .or. grecv(3*np) /= -7) bad = bad + 1
    if (bad /= 0) call fail('MPI_IALLTOALL / MPI_IALLGATHER wrong elements', bad)
    bad = 0
    do k = 0, 3
       if (rrecv(k) /= (k + 1)*np*(np + 1)/2 + np*m) bad = bad + 1
    end do
    if (rrecv(4) /= -7) bad = bad + 1
    if (bad /= 0) call fail('MPI_IALLREDUCE wrong elements', bad)
  end subroutine check_round

end program nonblocking_mixed
