/* The big kernel lock (klock.h). Owner -1: free, or held by no CPU in particular. */
#include "klock.h"

struct spinlock kernel_bkl;
volatile int kernel_bkl_owner = -1;
