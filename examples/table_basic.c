/* SPDX-License-Identifier: MIT */
/*
 * table_basic.c - bodies as four float columns of an ark_table, updated
 * by a loop the compiler vectorizes; handles follow rows as they move.
 * docs/table.md shows its regions.
 */
#include <ark/ark.h>
#include <stdio.h>

// [integrate]
/* restrict parameters and a trip count that is visibly a multiple of 8
 * let GCC vectorize this at -O2. */
static void integrate(float *restrict x, float *restrict y,
                      const float *restrict vx, const float *restrict vy,
                      size_t n, float dt) {
    n &= ~(size_t)7;
    for (size_t i = 0; i < n; i++) {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
    }
}
// [integrate]

int main(void) {
    // [usage]
    enum { X, Y, VX, VY }; /* the columns, all floats */
    const size_t sizes[4] = {sizeof(float), sizeof(float), sizeof(float),
                             sizeof(float)};
    ark_table_config cfg = {.column_sizes = sizes, .ncolumns = 4};
    ark_table *bodies;
    if (ark_table_create(&bodies, &cfg) != ARK_OK) {
        return 1;
    }
    ark_handle h[3];
    for (int i = 0; i < 3; i++) {
        size_t row;
        if (ark_table_insert(bodies, &h[i], &row) != ARK_OK) { /* zeroed */
            return 1;
        }
        ((float *)ark_table_column(bodies, VX))[row] = 1.0f + (float)i;
    }
    /* Rows [rows, round_up(rows, 8)) are zero: run whole groups of 8. */
    size_t n = (ark_table_rows(bodies) + 7) & ~(size_t)7;
    integrate(ark_table_column(bodies, X), ark_table_column(bodies, Y),
              ark_table_column(bodies, VX), ark_table_column(bodies, VY), n,
              0.5f);
    ark_table_remove(bodies, h[0]); /* the last row moves into row 0 */
    size_t row = ark_table_row(bodies, h[2]); /* handles follow the move */
    float x = ((float *)ark_table_column(bodies, X))[row];
    // [usage]
    printf("body 2 is in row %zu at x = %.1f\n", row, x);
    int ok = row == 0 && x == 1.5f &&
             ark_table_row(bodies, h[0]) == ARK_NO_ROW &&
             ark_table_check(bodies, h[0]) == ARK_ESTALE;
    ark_table_destroy(bodies);
    return ok ? 0 : 1;
}
