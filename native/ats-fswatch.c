/*
 * ats-fswatch: tells the sandbox service which entries (and folders) of a task's workspace image
 * a step touched, so a checkpoint looks at those instead of walking 10,000 files
 * (docs/design/workspace-checkpoints.md, "The detector that works").
 *
 * One fanotify group for the whole host process; one FAN_MARK_FILESYSTEM mark per task image
 * (each task's workspace is its own ext4 filesystem, so its marks see that task's files and
 * nothing else). Events carry the fsid and the file handle of the directory plus the entry's
 * name (FAN_REPORT_DFID_NAME); they are demultiplexed by fsid into per-task sets.
 *
 * Commands, one per line on stdin (an <id> is [A-Za-z0-9_-]{1,64}; the mountpoint is the rest
 * of the line and must be the root of a mount whose root is its filesystem's root):
 *   watch <id> <mountpoint>   mark the filesystem; the first drain after it answers rescan
 *   drain <id>                read every queued event, answer what <id> touched, forget it
 *   unwatch <id>              remove the mark, close the mount (call it before unmounting)
 * Answers on stdout: records of  [1 byte type][4 bytes length, big-endian][length bytes].
 *   'N' a touched entry: its folder relative to the mountpoint ('' the top), a NUL, its name;
 *       look at that entry again (its folder's other entries are as they were)
 *   'T' a touched folder ('' the top): re-list all of its entries
 *   'S' a subtree: a folder created or moved (from or to) there; walk it whole
 *   'K' the answer ends, all is well       (payload empty)
 *   'R' the answer ends: rescan everything (payload: why, for the log)
 *   'E' the answer ends: the command failed (payload: why)
 * Paths are raw bytes: names may hold '\n' or bytes that are not UTF-8.
 *
 * Why it is safe to run as root with a hostile task writing the watched filesystem:
 * - CAP_SYS_ADMIN: fanotify_init with a FID report and FAN_MARK_FILESYSTEM require it.
 * - CAP_DAC_READ_SEARCH: open_by_handle_at requires it, to turn a directory handle into a path.
 * - Nothing else: it opens no file by a name a task chose. It opens the mountpoints the service
 *   made (no link followed, never listed, refused unless a filesystem root mounted there) and the
 *   handles the kernel queued for its own marks, O_PATH only (no read, no write, no exec of any
 *   content), then reads the kernel's name of that open handle (/proc/self/fd). It never reads a
 *   file's contents. The task never talks to it: only the service holds its pipes.
 * - What it reports are hints: the service looks at each entry through its own no-follow reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define MAX_WATCHES 4096
#define ID_MAX 64

/*
 * Dirent events name the entry in the folder that changed; MODIFY/ATTRIB/CLOSE_WRITE of a file
 * come with its parent folder and name (a filesystem mark sees every inode, so FAN_EVENT_ON_CHILD
 * adds nothing). FAN_ONDIR: the same for folders (mkdir, rmdir, rename, chmod of a folder).
 * DELETE_SELF/MOVE_SELF are left out: the DELETE/MOVED_* on the parent say the same, and the
 * handle of a removed folder could only answer "rescan". CLOSE_WRITE catches a write through a
 * shared mapping, which reports no MODIFY.
 */
#define MASK (FAN_MODIFY | FAN_ATTRIB | FAN_CLOSE_WRITE | FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ONDIR)

/* A set of byte strings (open addressing): a step may touch thousands of entries of one folder. */
struct set {
    char **keys;
    size_t *lens;
    size_t count, cap;
};

struct watch {
    char id[ID_MAX + 1];
    int mount_fd;             /* the mount root: open_by_handle_at's mount, and readlink's prefix */
    char *mountpoint;         /* as given: checked at each drain to still be this filesystem */
    char *prefix;             /* the kernel's name of mount_fd */
    size_t prefix_len;
    __kernel_fsid_t fsid;
    dev_t dev;
    int rescan;               /* first drain after watch, after an overflow or an unresolvable handle */
    const char *why;
    struct set touched, named, subtrees;
};

static int group = -1;
static struct watch *watches[MAX_WATCHES];

static void out(char type, const void *data, size_t len) {
    unsigned char head[5] = {(unsigned char)type, len >> 24, len >> 16, len >> 8, len};
    fwrite(head, 1, 5, stdout);
    if (len) fwrite(data, 1, len, stdout);
}
static void end(char type, const char *why) {
    out(type, why, why ? strlen(why) : 0);
    fflush(stdout);
}

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}
static void set_add(struct set *set, const char *key, size_t len) {
    if ((set->count + 1) * 2 > set->cap) {
        struct set grown = {calloc(set->cap ? set->cap * 2 : 64, sizeof(char *)), calloc(set->cap ? set->cap * 2 : 64, sizeof(size_t)), 0, set->cap ? set->cap * 2 : 64};
        if (!grown.keys || !grown.lens) abort();
        for (size_t i = 0; i < set->cap; i++)
            if (set->keys[i]) {
                size_t j = hash(set->keys[i], set->lens[i]) & (grown.cap - 1);
                while (grown.keys[j]) j = (j + 1) & (grown.cap - 1);
                grown.keys[j] = set->keys[i], grown.lens[j] = set->lens[i], grown.count++;
            }
        free(set->keys), free(set->lens);
        *set = grown;
    }
    size_t j = hash(key, len) & (set->cap - 1);
    for (; set->keys[j]; j = (j + 1) & (set->cap - 1))
        if (set->lens[j] == len && memcmp(set->keys[j], key, len) == 0) return;
    if (!(set->keys[j] = malloc(len + 1))) abort();
    memcpy(set->keys[j], key, len), set->keys[j][len] = 0, set->lens[j] = len, set->count++;
}
static void set_flush(struct set *set, char type) {
    for (size_t i = 0; i < set->cap; i++)
        if (set->keys[i]) {
            if (type) out(type, set->keys[i], set->lens[i]);
            free(set->keys[i]);
        }
    free(set->keys), free(set->lens);
    memset(set, 0, sizeof *set);
}

static struct watch *find(const char *id) {
    for (int i = 0; i < MAX_WATCHES; i++)
        if (watches[i] && strcmp(watches[i]->id, id) == 0) return watches[i];
    return NULL;
}
static void rescan(struct watch *w, const char *why) {
    if (!w->rescan) w->why = why;
    w->rescan = 1;
}

/* The path of `fd` relative to the mount root, into buf; -1 when it is gone or outside. */
static ssize_t relative(struct watch *w, int fd, char *buf, size_t size) {
    char link[64], path[PATH_MAX + 1];
    struct stat st;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, PATH_MAX);
    /* A removed folder still held somewhere has no name left that means anything. */
    if (n < 0 || fstat(fd, &st) != 0 || st.st_nlink == 0) return -1;
    path[n] = 0;
    if ((size_t)n < w->prefix_len || memcmp(path, w->prefix, w->prefix_len) != 0) return -1;
    const char *rest = path + w->prefix_len;
    if (w->prefix_len > 1 && *rest == '/') rest++;
    else if (w->prefix_len > 1 && *rest) return -1;
    size_t len = strlen(rest);
    if (len >= size) return -1;
    memcpy(buf, rest, len + 1);
    return (ssize_t)len;
}

static void record(const struct fanotify_event_metadata *ev) {
    if (ev->mask & FAN_Q_OVERFLOW) {
        for (int i = 0; i < MAX_WATCHES; i++)
            if (watches[i]) rescan(watches[i], "the event queue overflowed");
        return;
    }
    const char *p = (const char *)(ev + 1), *stop = (const char *)ev + ev->event_len;
    while (p + sizeof(struct fanotify_event_info_header) <= stop) {
        const struct fanotify_event_info_header *hdr = (const void *)p;
        if (hdr->len == 0 || p + hdr->len > stop) return;
        p += hdr->len;
        if (hdr->info_type != FAN_EVENT_INFO_TYPE_DFID_NAME && hdr->info_type != FAN_EVENT_INFO_TYPE_DFID) continue;
        const struct fanotify_event_info_fid *fid = (const void *)hdr;
        struct watch *w = NULL;
        for (int i = 0; i < MAX_WATCHES && !w; i++)
            if (watches[i] && memcmp(&watches[i]->fsid, &fid->fsid, sizeof fid->fsid) == 0) w = watches[i];
        if (!w || w->rescan) continue; /* unwatched since, or past hints anyway */
        struct file_handle *handle = (struct file_handle *)fid->handle;
        const char *name = hdr->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ? (const char *)(handle->f_handle + handle->handle_bytes) : "";
        char dir[PATH_MAX + 1];
        int fd = open_by_handle_at(w->mount_fd, handle, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : relative(w, fd, dir, sizeof dir);
        if (fd >= 0) close(fd);
        if (n < 0) {
            rescan(w, "a touched folder is gone");
            continue;
        }
        size_t len = (size_t)n;
        char key[2 * PATH_MAX + 2];
        if (*name == 0 || strcmp(name, ".") == 0) {
            /* An event on the folder itself (its mode): its entry lives in its parent. */
            if (len == 0) {
                set_add(&w->touched, "", 0);
                continue;
            }
            char *slash = strrchr(dir, '/');
            int k = slash ? snprintf(key, sizeof key, "%.*s%c%s", (int)(slash - dir), dir, 0, slash + 1)
                          : snprintf(key, sizeof key, "%c%s", 0, dir);
            if (k > 0 && (size_t)k < sizeof key) set_add(&w->named, key, (size_t)k);
            continue;
        }
        int k = snprintf(key, sizeof key, "%s%c%s", dir, 0, name);
        if (k < 0 || (size_t)k >= sizeof key) rescan(w, "a path too long");
        else set_add(&w->named, key, (size_t)k);
        if ((ev->mask & FAN_ONDIR) && (ev->mask & (FAN_CREATE | FAN_MOVED_FROM | FAN_MOVED_TO))) {
            /* A folder made or moved: what is inside came with it, without events of its own. */
            int m = snprintf(key, sizeof key, "%s%s%s", dir, len ? "/" : "", name);
            if (m < 0 || (size_t)m >= sizeof key) rescan(w, "a path too long");
            else set_add(&w->subtrees, key, (size_t)m);
        }
    }
}

/* Reads the group until the queue is empty; every event already happened (fsnotify queues it before the syscall returns). */
static void read_events(void) {
    static char buf[256 * 1024] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
    for (;;) {
        ssize_t n = read(group, buf, sizeof buf);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno != EAGAIN)
                for (int i = 0; i < MAX_WATCHES; i++)
                    if (watches[i]) rescan(watches[i], "reading events failed");
            return;
        }
        const struct fanotify_event_metadata *ev = (const void *)buf;
        for (; FAN_EVENT_OK(ev, n); ev = FAN_EVENT_NEXT(ev, n)) {
            if (ev->fd >= 0) close(ev->fd); /* never with FID reports; closed should a kernel hand one */
            record(ev);
        }
    }
}

static void drop(struct watch *w) {
    fanotify_mark(group, FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM, MASK, w->mount_fd, ".");
    close(w->mount_fd);
    set_flush(&w->touched, 0), set_flush(&w->named, 0), set_flush(&w->subtrees, 0);
    free(w->mountpoint), free(w->prefix);
    for (int i = 0; i < MAX_WATCHES; i++)
        if (watches[i] == w) watches[i] = NULL;
    free(w);
}

/* A mount whose root is its filesystem's root (not a bind mount of a folder: marking that would mark the host's filesystem). */
static const char *not_a_filesystem_root(int fd) {
    struct statx stx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MNT_ID, &stx) != 0) return "cannot stat it";
    if (!S_ISDIR(stx.stx_mode)) return "not a folder";
    if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) || !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) return "not a mountpoint";
    if (!(stx.stx_mask & STATX_MNT_ID)) return "no mount id";
    FILE *info = fopen("/proc/self/mountinfo", "re");
    if (!info) return "no mountinfo";
    char line[8192];
    const char *why = "not in mountinfo";
    while (fgets(line, sizeof line, info)) {
        unsigned long long id;
        char root[8];
        /* mount-id parent-id major:minor root ...: the root field is "/" for a whole filesystem. */
        if (sscanf(line, "%llu %*u %*u:%*u %7s", &id, root) == 2 && id == stx.stx_mnt_id) {
            why = strcmp(root, "/") == 0 ? NULL : "a bind mount of a folder, not a filesystem";
            break;
        }
    }
    fclose(info);
    return why;
}

static void watch_cmd(const char *id, const char *mountpoint) {
    if (find(id)) return end('E', "already watched");
    int slot = 0;
    while (slot < MAX_WATCHES && watches[slot]) slot++;
    if (slot == MAX_WATCHES) return end('E', "too many watches");
    /* Not O_PATH: open_by_handle_at and fanotify_mark refuse those (EBADF). Never read (no getdents). */
    int fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return end('E', strerror(errno));
    const char *why = not_a_filesystem_root(fd);
    struct statfs sfs;
    struct stat st;
    char link[64], path[PATH_MAX + 1];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = why ? 0 : readlink(link, path, PATH_MAX);
    if (!why && (fstatfs(fd, &sfs) != 0 || fstat(fd, &st) != 0 || n <= 0)) why = "cannot stat it";
    for (int i = 0; !why && i < MAX_WATCHES; i++)
        if (watches[i] && memcmp(&watches[i]->fsid, &sfs.f_fsid, sizeof sfs.f_fsid) == 0) why = "its filesystem is watched already";
    if (!why && fanotify_mark(group, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, MASK, fd, ".") != 0) why = strerror(errno);
    if (why) {
        close(fd);
        return end('E', why);
    }
    struct watch *w = calloc(1, sizeof *w);
    if (!w) abort();
    path[n] = 0;
    snprintf(w->id, sizeof w->id, "%s", id);
    w->mount_fd = fd, w->mountpoint = strdup(mountpoint), w->prefix = strdup(path), w->prefix_len = (size_t)n;
    memcpy(&w->fsid, &sfs.f_fsid, sizeof w->fsid);
    w->dev = st.st_dev;
    /* What happened before the mark is unknown to it. */
    rescan(w, "newly watched");
    watches[slot] = w;
    end('K', NULL);
}

static void drain_cmd(const char *id) {
    struct watch *w = find(id);
    if (!w) return end('E', "not watched");
    read_events();
    struct stat st;
    /* The mountpoint now shows another filesystem (unmounted, mounted again): the mark saw nothing of it. */
    if (stat(w->mountpoint, &st) != 0 || st.st_dev != w->dev) rescan(w, "the mountpoint changed");
    if (w->rescan) {
        set_flush(&w->touched, 0), set_flush(&w->named, 0), set_flush(&w->subtrees, 0);
        w->rescan = 0;
        return end('R', w->why);
    }
    set_flush(&w->touched, 'T');
    set_flush(&w->named, 'N');
    set_flush(&w->subtrees, 'S');
    end('K', NULL);
}

static int valid_id(const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n > ID_MAX) return 0;
    for (size_t i = 0; i < n; i++)
        if (!(id[i] == '_' || id[i] == '-' || (id[i] >= '0' && id[i] <= '9') || ((id[i] | 32) >= 'a' && (id[i] | 32) <= 'z'))) return 0;
    return 1;
}

int main(void) {
    group = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
    if (group < 0) {
        fprintf(stderr, "ats-fswatch: fanotify_init: %s\n", strerror(errno));
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[n - 1] == '\n') line[--n] = 0;
        char *verb = line, *id = strchr(line, ' ');
        if (!id) {
            end('E', "usage: watch <id> <mountpoint> | drain <id> | unwatch <id>");
            continue;
        }
        *id++ = 0;
        char *rest = strchr(id, ' ');
        if (rest) *rest++ = 0;
        if (!valid_id(id)) end('E', "invalid id");
        else if (strcmp(verb, "watch") == 0 && rest && *rest == '/') watch_cmd(id, rest);
        else if (strcmp(verb, "drain") == 0 && !rest) drain_cmd(id);
        else if (strcmp(verb, "unwatch") == 0 && !rest) {
            struct watch *w = find(id);
            if (w) drop(w);
            end('K', NULL);
        } else end('E', "usage: watch <id> <mountpoint> | drain <id> | unwatch <id>");
    }
    free(line);
    return 0;
}
