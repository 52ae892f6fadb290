/* The floor of a vectorised Leduc hold'em step: a plain C loop over the same state and
 * outputs as hiddenenvs/vector/_kernels.pyx's LeducKernel (rules as in
 * hiddenenvs/envs/_leduc_holdem.pxd, max_raises 2: the player to move's 32-float
 * information-state tensor, the 3-action mask, the rewards, the terminated flags and both
 * players' final tensors when a game ends), random legal play with the same splitmix64
 * draws from the mask, every function inlined.
 *
 *     cc -O3 -o vector_floor_leduc benchmarks/vector_floor_leduc.c && ./vector_floor_leduc 1024 2000
 *
 * prints nanoseconds of CPU time per game-step (benchmarks/profile_vector.py runs it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vector_floor.h"

#define MAX_RAISES 2
#define TURNS (2 + MAX_RAISES)
#define TENSOR (8 + 6 * TURNS)
#define FOLD 0
#define CALL 1

typedef struct {
    int8_t ranks[3], actions[2][TURNS], lengths[2], round, raises, folded;
    int contributions[2];
} Game;

static inline void deal(Game *g, uint64_t *rng) {
    int first = below(rng, 6), second = below(rng, 5), third = below(rng, 4);
    if (second >= first) second += 1;
    if (third >= (first < second ? first : second)) third += 1;
    if (third >= (first < second ? second : first)) third += 1;
    g->ranks[0] = (int8_t)(first / 2);
    g->ranks[1] = (int8_t)(second / 2);
    g->ranks[2] = (int8_t)(third / 2);
    g->lengths[0] = g->lengths[1] = 0;
    g->round = 0;
    g->raises = 0;
    g->folded = -1;
    g->contributions[0] = g->contributions[1] = 1;
}

static inline void apply(Game *g, int action) {
    int round = g->round, turn = g->lengths[round], player = turn % 2;
    g->actions[round][turn] = (int8_t)action;
    g->lengths[round] = (int8_t)(turn + 1);
    if (action == FOLD) {
        g->folded = (int8_t)player;
    } else if (action == CALL) {
        g->contributions[player] = g->contributions[1 - player];
        if (turn + 1 >= 2 && round == 0) {
            g->round = 1;
            g->raises = 0;
        }
    } else {
        g->contributions[player] = g->contributions[1 - player] + (round == 0 ? 2 : 4);
        g->raises += 1;
    }
}

static inline int over(const Game *g) {
    int length = g->lengths[1];
    return g->folded >= 0 || (g->round == 1 && length >= 2 && g->actions[1][length - 1] == CALL);
}

static inline void tensor(const Game *g, int player, float *out) {
    memset(out, 0, TENSOR * sizeof(float));
    out[player] = 1.0f;
    out[2 + g->ranks[player]] = 1.0f;
    if (g->round == 1) out[5 + g->ranks[2]] = 1.0f;
    for (int r = 0, offset = 8; r <= g->round; r++, offset += 3 * TURNS)
        for (int t = 0; t < g->lengths[r]; t++) out[offset + 3 * t + g->actions[r][t]] = 1.0f;
}

static inline void mask(const Game *g, int player, int8_t *out) {
    out[0] = g->contributions[player] < g->contributions[1 - player];
    out[1] = 1;
    out[2] = g->raises < MAX_RAISES;
}

static inline void returns(const Game *g, float *out) {
    int loser;
    if (g->folded >= 0) {
        loser = g->folded;
    } else {
        int s0 = g->ranks[0] + (g->ranks[0] == g->ranks[2] ? 3 : 0);
        int s1 = g->ranks[1] + (g->ranks[1] == g->ranks[2] ? 3 : 0);
        if (s0 == s1) {
            out[0] = out[1] = 0.0f;
            return;
        }
        loser = s0 > s1 ? 1 : 0;
    }
    out[loser] = (float)-g->contributions[loser];
    out[1 - loser] = (float)g->contributions[loser];
}

static inline int draw(const int8_t *row, uint64_t *state) {
    int count = row[0] + row[1] + row[2], pick = below(state, count), seen = 0, chosen = 0;
    for (int a = 0; a < 3; a++) {  /* branch-free, as the kernel's draw */
        chosen += (row[a] & (seen == pick)) * a;
        seen += row[a];
    }
    return chosen;
}

int main(int argc, char **argv) {
    int batch = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 2000;
    Game *games = calloc(batch, sizeof(Game));
    uint64_t *rng = calloc(batch, sizeof(uint64_t)), *policy = calloc(batch, sizeof(uint64_t));
    float *observations = calloc((size_t)batch * TENSOR, sizeof(float));
    float *final = calloc((size_t)batch * 2 * TENSOR, sizeof(float));
    float *rewards = calloc((size_t)batch * 2, sizeof(float));
    int8_t *masks = calloc((size_t)batch * 3, 1), *terminated = calloc(batch, 1);
    int64_t *players = calloc(batch, sizeof(int64_t)), episodes = 0;
    for (int i = 0; i < batch; i++) {
        rng[i] = mix((uint64_t)i * GOLDEN + 1);
        policy[i] = mix((uint64_t)i * GOLDEN + 2);
        deal(&games[i], &rng[i]);
        tensor(&games[i], 0, &observations[i * TENSOR]);
        mask(&games[i], 0, &masks[3 * i]);
    }
    double start = cpu_seconds();
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < batch; i++) {
            Game *g = &games[i];
            apply(g, draw(&masks[3 * i], &policy[i]));
            if (over(g)) {
                returns(g, &rewards[2 * i]);
                tensor(g, 0, &final[2 * i * TENSOR]);
                tensor(g, 1, &final[(2 * i + 1) * TENSOR]);
                terminated[i] = 1;
                episodes++;
                deal(g, &rng[i]);
            } else {
                rewards[2 * i] = rewards[2 * i + 1] = 0.0f;
                terminated[i] = 0;
            }
            int player = g->lengths[g->round] % 2;
            players[i] = player;
            tensor(g, player, &observations[i * TENSOR]);
            mask(g, player, &masks[3 * i]);
        }
    }
    double seconds = cpu_seconds() - start;
    printf("%.2f ns per game-step (batch %d, %d steps, %lld games finished, checksum %g)\n",
           1e9 * seconds / ((double)batch * steps), batch, steps, (long long)episodes,
           (double)observations[3] + final[5] + rewards[0] + masks[1] + players[0] + terminated[0]);
    return 0;
}
