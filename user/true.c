/* true: does nothing, successfully (used by `stress tasks`). */
int main(void)
{
    return 0;
}
