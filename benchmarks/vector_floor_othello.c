/* The floor of a vectorised Othello 8x8 step: a plain C loop over the same state and
 * outputs as hiddenenvs/vector/_kernels.pyx's OthelloKernel (two bitboards and the next
 * mover's move bitboard per game, as hiddenenvs/envs/_othello.pxd computes them; the
 * player to move's (3, 8, 8) float32 planes, the 65-action mask, the rewards, the
 * terminated flags and both players' final planes when a game ends), random legal play
 * with the same splitmix64 draws taken from the move bitboard, every function inlined.
 *
 *     cc -O3 -o vector_floor_othello benchmarks/vector_floor_othello.c && ./vector_floor_othello 1024 200
 *
 * prints nanoseconds of CPU time per game-step (benchmarks/profile_vector.py runs it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vector_floor.h"

#define SQUARES 64
#define TENSOR (3 * SQUARES)
#define ACTIONS (SQUARES + 1)
#define NOT_FIRST_COLUMN 0xFEFEFEFEFEFEFEFEULL
#define NOT_LAST_COLUMN 0x7F7F7F7F7F7F7F7FULL
#define FULL 0xFFFFFFFFFFFFFFFFULL

static const int SHIFTS[8] = {1, 8, 9, 7, -1, -8, -9, -7};
static const uint64_t MASKS[8] = {NOT_FIRST_COLUMN, FULL, NOT_FIRST_COLUMN, NOT_LAST_COLUMN,
                                  NOT_LAST_COLUMN, FULL, NOT_LAST_COLUMN, NOT_FIRST_COLUMN};
static float BIT_FLOATS[256][8];
static int8_t BIT_BYTES[256][8];

static inline uint64_t shift(uint64_t bits, int by, uint64_t mask) {
    return (by > 0 ? bits << by : bits >> -by) & mask;
}

static inline uint64_t moves(uint64_t own, uint64_t opponent) {
    uint64_t empty = ~(own | opponent), result = 0;
    for (int d = 0; d < 8; d++) {
        uint64_t stepping = opponent & MASKS[d], line = shift(own, SHIFTS[d], stepping);
        for (int k = 0; k < 5; k++) line |= shift(line, SHIFTS[d], stepping);
        result |= shift(line, SHIFTS[d], MASKS[d]) & empty;
    }
    return result;
}

static inline uint64_t flips(uint64_t square, uint64_t own, uint64_t opponent) {
    uint64_t flipped = 0;
    for (int d = 0; d < 8; d++) {
        uint64_t line = 0, cursor = shift(square, SHIFTS[d], MASKS[d]);
        while (cursor & opponent) {
            line |= cursor;
            cursor = shift(cursor, SHIFTS[d], MASKS[d]);
        }
        if (cursor & own) flipped |= line;
    }
    return flipped;
}

typedef struct {
    uint64_t discs[2], moves;
    int8_t to_move, over;
} Game;

static const uint64_t BLACK = (1ULL << 28) | (1ULL << 35), WHITE = (1ULL << 27) | (1ULL << 36);

static inline void start_game(Game *g) {
    g->discs[0] = BLACK;
    g->discs[1] = WHITE;
    g->to_move = 0;
    g->moves = moves(BLACK, WHITE);
    g->over = 0;
}

static inline void play(Game *g, int action) {
    int player = g->to_move;
    uint64_t own = g->discs[player], opponent = g->discs[1 - player];
    if (action != SQUARES) {
        uint64_t square = 1ULL << action, flipped = flips(square, own, opponent);
        own |= square | flipped;
        opponent &= ~flipped;
        g->discs[player] = own;
        g->discs[1 - player] = opponent;
    }
    g->moves = moves(opponent, own);
    g->over = g->moves == 0 && moves(own, opponent) == 0;
    g->to_move = (int8_t)(1 - player);
}

static inline void bit_floats(uint64_t bits, float *out) {
    for (int b = 0; b < 8; b++) memcpy(out + 8 * b, BIT_FLOATS[(bits >> (8 * b)) & 0xFF], 32);
}

static inline void tensor(const Game *g, int player, float *out) {
    uint64_t own = g->discs[player], opponent = g->discs[1 - player];
    bit_floats(own, out);
    bit_floats(opponent, out + SQUARES);
    bit_floats(~(own | opponent), out + 2 * SQUARES);
}

static inline void mask(const Game *g, int8_t *out) {
    for (int b = 0; b < 8; b++) memcpy(out + 8 * b, BIT_BYTES[(g->moves >> (8 * b)) & 0xFF], 8);
    out[SQUARES] = g->moves == 0;
}

static inline int draw(const Game *g, uint64_t *state) {
    uint64_t bits = g->moves;
    if (bits == 0) {
        below(state, 1);
        return SQUARES;
    }
    for (int pick = below(state, __builtin_popcountll(bits)); pick > 0; pick--) bits &= bits - 1;
    return __builtin_ctzll(bits);
}

int main(int argc, char **argv) {
    int batch = argc > 1 ? atoi(argv[1]) : 1024, steps = argc > 2 ? atoi(argv[2]) : 200;
    for (int byte = 0; byte < 256; byte++)
        for (int bit = 0; bit < 8; bit++) {
            BIT_FLOATS[byte][bit] = (float)((byte >> bit) & 1);
            BIT_BYTES[byte][bit] = (int8_t)((byte >> bit) & 1);
        }
    Game *games = calloc(batch, sizeof(Game));
    uint64_t *policy = calloc(batch, sizeof(uint64_t));
    float *observations = calloc((size_t)batch * TENSOR, sizeof(float));
    float *final = calloc((size_t)batch * 2 * TENSOR, sizeof(float));
    float *rewards = calloc((size_t)batch * 2, sizeof(float));
    int8_t *masks = calloc((size_t)batch * ACTIONS, 1), *terminated = calloc(batch, 1);
    int64_t *players = calloc(batch, sizeof(int64_t)), episodes = 0;
    for (int i = 0; i < batch; i++) {
        policy[i] = mix((uint64_t)i * GOLDEN + 2);
        start_game(&games[i]);
        tensor(&games[i], 0, &observations[i * TENSOR]);
        mask(&games[i], &masks[i * ACTIONS]);
    }
    double start = cpu_seconds();
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < batch; i++) {
            Game *g = &games[i];
            play(g, draw(g, &policy[i]));
            if (g->over) {
                int black = __builtin_popcountll(g->discs[0]), white = __builtin_popcountll(g->discs[1]);
                float result = black > white ? 1.0f : (black < white ? -1.0f : 0.0f);
                rewards[2 * i] = result;
                rewards[2 * i + 1] = -result;
                tensor(g, 0, &final[2 * i * TENSOR]);
                tensor(g, 1, &final[(2 * i + 1) * TENSOR]);
                terminated[i] = 1;
                episodes++;
                start_game(g);
            } else {
                rewards[2 * i] = rewards[2 * i + 1] = 0.0f;
                terminated[i] = 0;
            }
            players[i] = g->to_move;
            tensor(g, g->to_move, &observations[i * TENSOR]);
            mask(g, &masks[i * ACTIONS]);
        }
    }
    double seconds = cpu_seconds() - start;
    printf("%.2f ns per game-step (batch %d, %d steps, %lld games finished, checksum %g)\n",
           1e9 * seconds / ((double)batch * steps), batch, steps, (long long)episodes,
           (double)observations[3] + final[5] + rewards[0] + masks[1] + players[0] + terminated[0]);
    return 0;
}
