/* The floor of a vectorised Kuhn poker step: a plain C loop over the same state and
 * outputs as hiddenenvs/vector/_kernels.pyx's KuhnKernel (cards, bets, bet count per
 * game; the player to move's 11-float information-state tensor, the 2-action mask, the
 * rewards, the terminated flags and both players' final tensors when a game ends),
 * random legal play with the same splitmix64 draws, every function inlined.
 *
 *     cc -O3 -o vector_floor_kuhn benchmarks/vector_floor_kuhn.c && ./vector_floor_kuhn 1024 2000
 *
 * prints nanoseconds of CPU time per game-step (benchmarks/profile_vector.py runs it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vector_floor.h"

#define TENSOR 11

typedef struct {
    int8_t cards[2], bets[3], count;
} Game;

static inline void deal(Game *g, uint64_t *rng) {
    int first = below(rng, 3), second = below(rng, 2);
    if (second >= first) second += 1;
    g->cards[0] = (int8_t)first;
    g->cards[1] = (int8_t)second;
    g->count = 0;
}

static inline int terminal(const Game *g) {
    int c = g->count;
    return c >= 2 && (c == 3 || g->bets[c - 2] == 1 || (g->bets[0] == 0 && g->bets[1] == 0));
}

static inline void tensor(const Game *g, int player, float *out) {
    for (int k = 0; k < TENSOR; k++) out[k] = 0.0f;
    out[player] = 1.0f;
    out[2 + g->cards[player]] = 1.0f;
    for (int t = 0; t < g->count; t++) out[5 + 2 * t + g->bets[t]] = 1.0f;
}

static inline void returns(const Game *g, float *out) {
    int contributions[2] = {1, 1}, any_bet = 0, c = g->count, winner;
    for (int t = 0; t < c; t++) {
        contributions[t % 2] += g->bets[t];
        any_bet |= g->bets[t];
    }
    if (g->bets[c - 1] == 0 && any_bet)
        winner = 1 - (c - 1) % 2;
    else
        winner = g->cards[1] > g->cards[0];
    out[winner] = (float)contributions[1 - winner];
    out[1 - winner] = (float)-contributions[1 - winner];
}

int main(int argc, char **argv) {
    int batch = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 2000;
    Game *games = calloc(batch, sizeof(Game));
    uint64_t *rng = calloc(batch, sizeof(uint64_t)), *policy = calloc(batch, sizeof(uint64_t));
    float *observations = calloc((size_t)batch * TENSOR, sizeof(float));
    float *final = calloc((size_t)batch * 2 * TENSOR, sizeof(float));
    float *rewards = calloc((size_t)batch * 2, sizeof(float));
    int8_t *masks = calloc((size_t)batch * 2, 1), *terminated = calloc(batch, 1);
    int64_t *players = calloc(batch, sizeof(int64_t)), episodes = 0;
    for (int i = 0; i < batch; i++) {
        rng[i] = mix((uint64_t)i * GOLDEN + 1);
        policy[i] = mix((uint64_t)i * GOLDEN + 2);
        deal(&games[i], &rng[i]);
        tensor(&games[i], 0, &observations[i * TENSOR]);
    }
    double start = cpu_seconds();
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < batch; i++) {
            Game *g = &games[i];
            int action = below(&policy[i], 2);  /* both actions are always legal */
            g->bets[g->count++] = (int8_t)action;
            if (terminal(g)) {
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
            int player = g->count % 2;
            players[i] = player;
            tensor(g, player, &observations[i * TENSOR]);
            masks[2 * i] = masks[2 * i + 1] = 1;
        }
    }
    double seconds = cpu_seconds() - start;
    printf("%.2f ns per game-step (batch %d, %d steps, %lld games finished, checksum %g)\n",
           1e9 * seconds / ((double)batch * steps), batch, steps, (long long)episodes,
           (double)observations[3] + final[5] + rewards[0] + masks[1] + players[0] + terminated[0]);
    return 0;
}
