/* The fake runtime itself: user-memory bounds give EFAULT exactly at the edges. */
#include "fake.h"

int main(void)
{
    struct proc *p = fake_proc(16);
    char buf[16] = "0123456789abcdef";
    CHECK_EQ(copy_out(p, fake_user(p, 0), buf, 16), 0);
    CHECK_EQ(copy_out(p, fake_user(p, 1), buf, 16), -EFAULT);
    CHECK_EQ(copy_in(p, buf, 0, 1), -EFAULT);
    CHECK_EQ(copy_in(p, buf, fake_user(p, 15), 1), 0);
    CHECK_EQ(copy_in(p, buf, fake_user(p, 16), 1), -EFAULT);
    CHECK_EQ(copy_in_str(p, buf, fake_user(p, 0), 16), -ENAMETOOLONG);
    char big[32];
    CHECK_EQ(copy_in_str(p, big, fake_user(p, 0), 32), -EFAULT);   /* runs off the end */
    ((char *)fake_host(p, fake_user(p, 4)))[0] = 0;
    CHECK_EQ(copy_in_str(p, buf, fake_user(p, 0), 16), 4);
    CHECK_EQ(copy_in_str(p, buf, fake_user(p, 0), 4), -ENAMETOOLONG);
    fake_proc_free(p);
    return fake_done();
}
