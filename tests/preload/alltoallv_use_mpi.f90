! A Fortran client of MPI_ALLTOALLV (`use mpi`): non-uniform counts, displacements
! in reverse order with gaps, then MPI_IN_PLACE; every received element is checked. Then
! MPI_ALLGATHER, MPI_ALLREDUCE and MPI_ALLTOALL (and in place).
program alltoallv_use_mpi
  use mpi
  implicit none
  integer :: ierr, me, np, j, k, nerr, stot, rtot
  integer, allocatable :: scount(:), sdispl(:), rcount(:), rdispl(:), sbuf(:), rbuf(:)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, me, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  allocate(scount(0:np-1), sdispl(0:np-1), rcount(0:np-1), rdispl(0:np-1))
  nerr = 0

  ! Block me -> j holds mod(me + 2*j, 4) elements (zero-sized blocks included);
  ! blocks are stored in reverse rank order with one unused element between them.
  stot = 0
  rtot = 0
  do j = np - 1, 0, -1
     scount(j) = mod(me + 2*j, 4)
     sdispl(j) = stot
     stot = stot + scount(j) + 1
     rcount(j) = mod(j + 2*me, 4)
     rdispl(j) = rtot
     rtot = rtot + rcount(j) + 1
  end do
  allocate(sbuf(0:stot), rbuf(0:rtot))
  sbuf = -1
  do j = 0, np - 1
     do k = 0, scount(j) - 1
        sbuf(sdispl(j) + k) = 100000*me + 100*j + k
     end do
  end do
  rbuf = -7
  call MPI_ALLTOALLV(sbuf, scount, sdispl, MPI_INTEGER, rbuf, rcount, rdispl, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) nerr = nerr + 1
  do j = 0, np - 1
     do k = 0, rcount(j) - 1
        if (rbuf(rdispl(j) + k) /= 100000*j + 100*me + k) nerr = nerr + 1
     end do
     ! the gap after each block stays untouched
     if (rbuf(rdispl(j) + rcount(j)) /= -7) nerr = nerr + 1
  end do

  ! MPI_IN_PLACE: symmetric counts, rank i's block j becomes rank j's block i.
  do j = 0, np - 1
     rcount(j) = 1 + mod(me + j, 3)
     rdispl(j) = 4*j
  end do
  deallocate(rbuf)
  allocate(rbuf(0:4*np))
  do j = 0, np - 1
     do k = 0, 3
        rbuf(4*j + k) = -7
     end do
     do k = 0, rcount(j) - 1
        rbuf(4*j + k) = 100000*me + 100*j + k
     end do
  end do
  call MPI_ALLTOALLV(MPI_IN_PLACE, scount, sdispl, MPI_INTEGER, rbuf, rcount, rdispl, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) nerr = nerr + 1
  do j = 0, np - 1
     do k = 0, rcount(j) - 1
        if (rbuf(4*j + k) /= 100000*j + 100*me + k) nerr = nerr + 1
     end do
     do k = rcount(j), 3
        if (rbuf(4*j + k) /= -7) nerr = nerr + 1
     end do
  end do

  ! MPI_ALLGATHER (two integers per rank) and MPI_ALLREDUCE (a vector, not in place): the
  ! preload takes the Fortran bindings of these too.
  deallocate(sbuf, rbuf)
  allocate(sbuf(0:2), rbuf(0:2*np))
  sbuf(0) = 10*me + 1
  sbuf(1) = 10*me + 2
  rbuf = -7
  call MPI_ALLGATHER(sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) nerr = nerr + 1
  do j = 0, np - 1
     if (rbuf(2*j) /= 10*j + 1 .or. rbuf(2*j + 1) /= 10*j + 2) nerr = nerr + 1
  end do
  if (rbuf(2*np) /= -7) nerr = nerr + 1
  sbuf(0) = me
  sbuf(1) = 1
  rbuf = -7
  call MPI_ALLREDUCE(sbuf, rbuf, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) nerr = nerr + 1
  if (rbuf(0) /= np*(np - 1)/2 .or. rbuf(1) /= np .or. rbuf(2) /= -7) nerr = nerr + 1

  ! MPI_ALLTOALL (three integers per block), then in place: the preload takes it too.
  deallocate(sbuf, rbuf)
  allocate(sbuf(0:3*np), rbuf(0:3*np))
  do j = 0, np - 1
     do k = 0, 2
        sbuf(3*j + k) = 100000*me + 100*j + k
     end do
  end do
  rbuf = -7
  call MPI_ALLTOALL(sbuf, 3, MPI_INTEGER, rbuf, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) nerr = nerr + 1
  do j = 0, np - 1
     do k = 0, 2
        if (rbuf(3*j + k) /= 100000*j + 100*me + k) nerr = nerr + 1
     end do
  end do
  if (rbuf(3*np) /= -7) nerr = nerr + 1
  rbuf(0:3*np-1) = sbuf(0:3*np-1)
  call MPI_ALLTOALL(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 3, MPI_INTEGER, MPI_COMM_WORLD, &
                    ierr)
  if (ierr /= MPI_SUCCESS) nerr = nerr + 1
  do j = 0, np - 1
     do k = 0, 2
        if (rbuf(3*j + k) /= 100000*j + 100*me + k) nerr = nerr + 1
     end do
  end do
  if (rbuf(3*np) /= -7) nerr = nerr + 1

  call MPI_ALLREDUCE(MPI_IN_PLACE, nerr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) then
     if (nerr == 0) then
        print '(a,i0,a)', 'alltoallv_use_mpi: OK on ', np, ' ranks'
     else
        print '(a,i0,a)', 'alltoallv_use_mpi: FAILED, ', nerr, ' wrong elements'
     end if
  end if
  call MPI_FINALIZE(ierr)
  if (nerr /= 0) stop 1
end program alltoallv_use_mpi
