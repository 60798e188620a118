/* SPDX-License-Identifier: MIT */
/*
 * snapshot_memory.c - a server sends its ships to a client as a snapshot
 * in memory (ark_membuf), and the client loads the bytes it received
 * (ark_bytes): a replica with the server's handles. Elements are zeroed
 * before their fields are set, so the padding a snapshot carries holds no
 * leftover memory. docs/snapshot.md shows its regions.
 */
#include <ark/ark.h>
#include <stdio.h>
#include <string.h>

typedef struct ship {
    uint8_t team; /* padding follows, up to the alignment of x */
    double x, y;
} ship;

int main(void) {
    ark_pool_config cfg = {ARK_POOL_ELEM(ship), .index_bits = 20,
                           .gen_bits = 12};
    ark_pool *ships;
    if (ark_pool_create(&ships, &cfg) != ARK_OK) {
        return 1;
    }
    // [zero]
    ark_handle a, b;
    ship *s = ark_pool_alloc(ships, &a); /* a zeroed slot, padding too */
    if (s == NULL) {
        return 1;
    }
    s->team = 1;
    s->x = 10;

    ship t;
    memset(&t, 0, sizeof t); /* every byte, not only the fields */
    t.team = 2;
    t.y = -5;
    if (ark_pool_insert(ships, &t, &b) != ARK_OK) {
        return 1;
    }
    // [zero]

    // [send]
    ark_membuf buf = {0}; /* grows as the save writes */
    ark_writer w = ark_membuf_writer(&buf);
    if (ark_pool_save(ships, &w) != ARK_OK) {
        return 1; /* ARK_ENOMEM: buf keeps what was written */
    }
    /* send(sock, buf.data, buf.size, 0); the client receives them: */
    ark_bytes in = {.data = buf.data, .size = buf.size};
    ark_reader r = ark_bytes_reader(&in);
    ark_pool *replica;
    ark_status st = ark_pool_load(&replica, &cfg, &r); /* same handles */
    // [send]
    if (st != ARK_OK) {
        return 1;
    }
    const ship *ra = ark_pool_get(replica, a);
    const ship *rb = ark_pool_get(replica, b);
    printf("%zu bytes sent, %zu ships in the replica\n", buf.size,
           ark_pool_count(replica));
    int ok = in.pos == buf.size && ra != NULL && rb != NULL &&
             memcmp(ra, ark_pool_get(ships, a), sizeof *ra) == 0 &&
             memcmp(rb, &t, sizeof *rb) == 0;
    ark_membuf_free(&buf);
    ark_pool_destroy(replica);
    ark_pool_destroy(ships);
    return ok ? 0 : 1;
}
