/* Test fixture: stands for a hand-written kernel source; its hash is the
   capsule's revision. */
void matmul_blocked(void) {}
