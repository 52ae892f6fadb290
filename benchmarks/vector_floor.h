/* What the plain C floors of benchmarks/vector_floor_<game>.c share: the splitmix64 draws
 * of hiddenenvs/vector/_kernels.pyx (the same stream per game, so the same games) and the
 * CPU clock they time their loops with. */
#ifndef VECTOR_FLOOR_H
#define VECTOR_FLOOR_H

#include <stdint.h>
#include <time.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL

static inline uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, n) from the generator at *state. */
static inline int below(uint64_t *state, int n) {
    *state += GOLDEN;
    return (int)(((mix(*state) >> 32) * (uint64_t)n) >> 32);
}

/* This process's CPU seconds. */
static inline double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return now.tv_sec + 1e-9 * now.tv_nsec;
}

#endif
