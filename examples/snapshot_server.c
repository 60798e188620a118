/* SPDX-License-Identifier: MIT */
/*
 * snapshot_server.c - a game server saves its players to a file and a
 * restarted server loads them: the sealed handles its clients hold still
 * name the same players, and the next players get the handles the first
 * server would have given them.
 *
 *   snapshot_server save FILE   run the first server: players join and
 *                               leave, then save FILE, and write the
 *                               tokens the clients hold to FILE.clients
 *   snapshot_server load FILE   the restarted server (a new process):
 *                               load FILE, check every client's token
 *   snapshot_server             both, in one run (FILE in the current
 *                               directory)
 *
 * docs/snapshot.md shows its regions.
 */
#include <ark/ark.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct player {
    char name[16];
    int32_t x, y;
    uint32_t score;
} player;

/* Both servers: the same layout and element size. The seal key is drawn
 * from the OS at create (seal_key 0) and kept in the snapshot. */
static const ark_pool_config cfg = {.elem_size = sizeof(player),
                                    .elem_align = 4,
                                    .index_bits = 20,
                                    .gen_bits = 12};

static int save(const char *path) {
    ark_pool *players;
    if (ark_pool_create(&players, &cfg) != ARK_OK) {
        return 1;
    }
    /* Forty players join; every third one leaves again. */
    ark_handle h[40];
    for (int k = 0; k < 40; k++) {
        player p = {{0}, k, -k, (uint32_t)k * 10};
        snprintf(p.name, sizeof p.name, "player%02d", k);
        if (ark_pool_insert(players, &p, &h[k]) != ARK_OK) {
            return 1;
        }
    }
    for (int k = 0; k < 40; k += 3) {
        ark_pool_remove(players, h[k]);
    }
    /* Each client holds its player's sealed handle; note them with the
     * name each should find, and the handle the next join would get. */
    char clients_path[512];
    snprintf(clients_path, sizeof clients_path, "%s.clients", path);
    FILE *clients = fopen(clients_path, "w");
    if (clients == NULL) {
        return 1;
    }
    for (ark_pool_iter it = ark_pool_iter_begin(players);
         ark_pool_iter_valid(&it); ark_pool_iter_next(&it)) {
        fprintf(clients, "%" PRIx64 " %s\n", ark_pool_seal(players, it.handle),
                ((player *)it.elem)->name);
    }
    // [save]
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return 1;
    }
    ark_writer w = ark_file_writer(f);
    ark_status s = ark_pool_save(players, &w); /* ARK_EIO: disk full */
    if (fclose(f) != 0 && s == ARK_OK) {
        s = ARK_EIO; /* the last bytes did not reach the file */
    }
    // [save]
    printf("saved %zu players: %s\n", ark_pool_count(players), ark_strerror(s));
    ark_handle next;
    ark_pool_insert(players, &(player){"newcomer", 0, 0, 0}, &next);
    fprintf(clients, "next %" PRIx64 "\n", next);
    fclose(clients);
    ark_pool_destroy(players);
    return s == ARK_OK ? 0 : 1;
}

static int load(const char *path) {
    char clients_path[512];
    snprintf(clients_path, sizeof clients_path, "%s.clients", path);
    FILE *clients = fopen(clients_path, "r");
    if (clients == NULL) {
        return 1;
    }
    // [load]
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return 1;
    }
    ark_reader r = ark_file_reader(f);
    ark_pool *players;
    ark_status s = ark_pool_load(&players, &cfg, &r); /* cfg as saved */
    fclose(f);
    // [load]
    printf("loaded: %s\n", ark_strerror(s));
    if (s != ARK_OK) {
        return 1;
    }
    /* Every client's token still names its player. */
    int ok = 0, bad = 0;
    uint64_t token;
    char name[16];
    while (fscanf(clients, "%" SCNx64 " %15s", &token, name) == 2) {
        const player *p =
            ark_pool_get(players, ark_pool_unseal(players, token));
        if (p != NULL && strcmp(p->name, name) == 0) {
            ok++;
        } else {
            bad++;
        }
    }
    /* And the next join gets the handle the old server would have given. */
    uint64_t want = 0;
    int got_next = fscanf(clients, "next %" SCNx64, &want) == 1;
    fclose(clients);
    ark_handle next;
    ark_pool_insert(players, &(player){"newcomer", 0, 0, 0}, &next);
    printf("%d clients find their player, %d do not; next handle %s\n", ok, bad,
           got_next && next == want ? "as before" : "differs");
    ark_pool_destroy(players);
    return ok == 26 && bad == 0 && got_next && next == want ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "save") == 0) {
        return save(argv[2]);
    }
    if (argc == 3 && strcmp(argv[1], "load") == 0) {
        return load(argv[2]);
    }
    const char *path = "snapshot_server.ark";
    return save(path) != 0 || load(path) != 0;
}
