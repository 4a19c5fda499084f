! A Fortran client of MPI_Alltoallv through `use mpi_f08` (no ierror argument), with
! double precision data (exactly representable values, compared exactly), non-uniform
! counts and displacements with gaps; then MPI_Allgather, MPI_Allreduce and MPI_Alltoall
! (and in place).
program alltoallv_f08
  use mpi_f08
  implicit none
  integer :: me, np, j, k, nerr, stot, rtot
  integer, allocatable :: scount(:), sdispl(:), rcount(:), rdispl(:)
  double precision, allocatable :: sbuf(:), rbuf(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  allocate(scount(0:np-1), sdispl(0:np-1), rcount(0:np-1), rdispl(0:np-1))
  stot = 0
  rtot = 0
  do j = 0, np - 1
     scount(j) = mod(3*me + j, 5)
     sdispl(j) = stot
     stot = stot + scount(j) + 2
     rcount(j) = mod(3*j + me, 5)
     rdispl(j) = rtot
     rtot = rtot + rcount(j) + 2
  end do
  allocate(sbuf(0:stot), rbuf(0:rtot))
  sbuf = -1d0
  do j = 0, np - 1
     do k = 0, scount(j) - 1
        sbuf(sdispl(j) + k) = 1000d0*me + j + k/8d0
     end do
  end do
  rbuf = -7d0
  call MPI_Alltoallv(sbuf, scount, sdispl, MPI_DOUBLE_PRECISION, rbuf, rcount, rdispl, &
                     MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
  nerr = 0
  do j = 0, np - 1
     do k = 0, rcount(j) - 1
        if (abs(rbuf(rdispl(j) + k) - (1000d0*j + me + k/8d0)) > 0d0) nerr = nerr + 1
     end do
     if (abs(rbuf(rdispl(j) + rcount(j)) + 7d0) > 0d0) nerr = nerr + 1
  end do
  ! MPI_Allgather and MPI_Allreduce through mpi_f08 too.
  deallocate(sbuf, rbuf)
  allocate(sbuf(0:1), rbuf(0:np))
  sbuf(0) = me + 0.5d0
  rbuf = -7d0
  call MPI_Allgather(sbuf, 1, MPI_DOUBLE_PRECISION, rbuf, 1, MPI_DOUBLE_PRECISION, &
                     MPI_COMM_WORLD)
  do j = 0, np - 1
     if (abs(rbuf(j) - (j + 0.5d0)) > 0d0) nerr = nerr + 1
  end do
  if (abs(rbuf(np) + 7d0) > 0d0) nerr = nerr + 1
  rbuf = -7d0
  call MPI_Allreduce(sbuf, rbuf, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  if (abs(rbuf(0) - (np - 0.5d0)) > 0d0 .or. abs(rbuf(1) + 7d0) > 0d0) nerr = nerr + 1
  ! MPI_Alltoall (two values per block), then in place.
  deallocate(sbuf, rbuf)
  allocate(sbuf(0:2*np), rbuf(0:2*np))
  do j = 0, np - 1
     sbuf(2*j) = 1000d0*me + j
     sbuf(2*j + 1) = 1000d0*me + j + 0.25d0
  end do
  rbuf = -7d0
  call MPI_Alltoall(sbuf, 2, MPI_DOUBLE_PRECISION, rbuf, 2, MPI_DOUBLE_PRECISION, &
                    MPI_COMM_WORLD)
  do j = 0, np - 1
     if (abs(rbuf(2*j) - (1000d0*j + me)) > 0d0) nerr = nerr + 1
     if (abs(rbuf(2*j + 1) - (1000d0*j + me + 0.25d0)) > 0d0) nerr = nerr + 1
  end do
  if (abs(rbuf(2*np) + 7d0) > 0d0) nerr = nerr + 1
  rbuf(0:2*np-1) = sbuf(0:2*np-1)
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 2, MPI_DOUBLE_PRECISION, &
                    MPI_COMM_WORLD)
  do j = 0, np - 1
     if (abs(rbuf(2*j) - (1000d0*j + me)) > 0d0) nerr = nerr + 1
     if (abs(rbuf(2*j + 1) - (1000d0*j + me + 0.25d0)) > 0d0) nerr = nerr + 1
  end do
  if (abs(rbuf(2*np) + 7d0) > 0d0) nerr = nerr + 1
  call MPI_Allreduce(MPI_IN_PLACE, nerr, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) then
     if (nerr == 0) then
        print '(a,i0,a)', 'alltoallv_f08: OK on ', np, ' ranks'
     else
        print '(a,i0,a)', 'alltoallv_f08: FAILED, ', nerr, ' wrong elements'
     end if
  end if
  call MPI_Finalize()
  if (nerr /= 0) stop 1
end program alltoallv_f08
