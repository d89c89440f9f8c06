// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Finding cgroups on the v2 hierarchy. On cgroup2 a directory's inode number is the kernel's
 * cgroup id (what bpf_get_current_cgroup_id() returns), so ids and paths map through stat().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/cgroup.h"
#include "sources/container_names.h"
#include "sources/container_path.h"
#include "lib/hashtab.h"

#define FIELD_SEPARATORS " \n"

static bool is_decimal(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
	}
	return true;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* MAJ:MIN */
static bool is_device(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t major_len = colon ? (size_t)(colon - s) : 0;

	if (!major_len || strspn(s, "0123456789") != major_len)
		return false;
	return is_decimal(colon + 1);
}

/*
 * The kernel writes space, tab, newline and backslash in mountinfo paths as \ooo. A \000 would
 * cut the path short, so such a line counts as malformed.
 */
static int unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && is_octal(s[1]) && is_octal(s[2]) && is_octal(s[3])) {
			int c = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');

			if (c == 0 || c > 0xff)
				return -EINVAL;
			*out++ = (char)c;
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
	return 0;
}

/*
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS". The number
 * of optional fields varies, so the filesystem type is found after the lone "-", never by its
 * position. Splits line in place; true with root and mountpoint decoded for a line of fstype.
 */
static bool parse_mount_line(char *line, const char *fstype, char **root, char **mountpoint,
			     char **superopts)
{
	char *field[6], *tail[3], *save = NULL, *token;
	size_t i;

	for (i = 0; i < 6; i++) {
		field[i] = strtok_r(i ? NULL : line, FIELD_SEPARATORS, &save);
		if (!field[i])
			return false;
	}
	do {
		token = strtok_r(NULL, FIELD_SEPARATORS, &save);
	} while (token && strcmp(token, "-"));
	if (!token)
		return false;
	for (i = 0; i < 3; i++) {
		tail[i] = strtok_r(NULL, FIELD_SEPARATORS, &save);
		if (!tail[i])
			return false;
	}
	if (strcmp(tail[0], fstype) || !is_decimal(field[0]) || !is_decimal(field[1]) ||
	    !is_device(field[2]))
		return false;
	if (unescape_octal(field[3]) || unescape_octal(field[4]) || field[3][0] != '/' ||
	    field[4][0] != '/')
		return false;
	*root = field[3];
	*mountpoint = field[4];
	*superopts = tail[2];
	return true;
}

/* Whether a comma-separated list (mount options, a v1 hierarchy's controllers) has word. */
static bool list_has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* The first mount of fstype in mountinfo_path whose super options have option (or any, NULL). */
static int find_mount(const char *mountinfo_path, const char *fstype, const char *option,
		      struct cgroup_mount *m)
{
	char *line = NULL, *root, *mountpoint, *superopts;
	size_t size = 0;
	int ret = -ENOENT;
	FILE *f;

	f = fopen(mountinfo_path, "re");
	if (!f)
		return -errno;
	errno = 0;
	while (getline(&line, &size, f) != -1) {
		if (!parse_mount_line(line, fstype, &root, &mountpoint, &superopts))
			continue;
		if (option && !list_has(superopts, option))
			continue;
		if (strlen(root) >= sizeof(m->root) || strlen(mountpoint) >= sizeof(m->path)) {
			ret = -ENAMETOOLONG;
			goto out;
		}
		strcpy(m->root, root);
		strcpy(m->path, mountpoint);
		ret = 0;
		goto out;
	}
	if (ferror(f))
		ret = errno ? -errno : -EIO;
out:
	free(line);
	fclose(f);
	return ret;
}

int cgroup_find_v2_mount(const char *mountinfo_path, struct cgroup_mount *m)
{
	return find_mount(mountinfo_path, "cgroup2", NULL, m);
}

int cgroup_find_v1_mount(const char *mountinfo_path, const char *controller, struct cgroup_mount *m)
{
	return find_mount(mountinfo_path, "cgroup", controller, m);
}

/* Appends the components of s to the normalised absolute path out[0..*n). */
static int append_components(char *out, size_t size, size_t *n, const char *s)
{
	while (*s) {
		const char *start;
		size_t len;

		while (*s == '/')
			s++;
		start = s;
		while (*s && *s != '/')
			s++;
		len = (size_t)(s - start);
		if (!len || (len == 1 && start[0] == '.'))
			continue;
		if (len == 2 && start[0] == '.' && start[1] == '.') {
			while (*n > 0 && out[--*n] != '/')
				;
			continue;
		}
		if (*n + 1 + len >= size)
			return -ENAMETOOLONG;
		out[(*n)++] = '/';
		memcpy(out + *n, start, len);
		*n += len;
	}
	return 0;
}

/*
 * base/rest with "//", "." and ".." taken out lexically: cgroupfs has no symlinks, so ".." needs
 * no lookup. base is absolute; rest may be NULL. ".." may climb out of base, which the callers
 * check for.
 */
static int build_path(char *out, size_t size, const char *base, const char *rest)
{
	size_t n = 0;
	int ret;

	if (size < 2)
		return -ENAMETOOLONG;
	ret = append_components(out, size, &n, base);
	if (!ret && rest)
		ret = append_components(out, size, &n, rest);
	if (ret)
		return ret;
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	return 0;
}

/* The part of path below base ("" for base itself, "/a/b" below it), or NULL when outside. */
static const char *path_below(const char *base, const char *path)
{
	size_t n = strlen(base);

	while (n > 1 && base[n - 1] == '/')
		n--;
	if (n == 1 && base[0] == '/')
		return path[0] == '/' ? path : NULL;
	if (strncmp(path, base, n) || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path + n;
}

static int copy_path(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(dst, src, len + 1);
	return 0;
}

/* lstat(): a symlink's target could lie outside the mount, so a symlink is no cgroup. */
int cgroup_id_of_path(const char *path, uint64_t *id)
{
	struct stat st;

	if (lstat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = st.st_ino;
	return 0;
}

/* Called for every directory of a walk with its absolute path: 0 goes on, 1 stops, or -errno. */
typedef int (*walk_fn)(void *ctx, const char *path, const struct stat *st);

/*
 * Depth first below the directory open as fd (taken over), whose path is in path. Like nftw()
 * with FTW_PHYS | FTW_MOUNT: symlinks are not followed and other filesystems not entered.
 * Directories that vanish or cannot be read mid-walk are skipped: cgroups come and go.
 */
static int walk_below(int fd, char *path, size_t size, dev_t dev, walk_fn fn, void *ctx)
{
	size_t n = strlen(path);
	const char *sep = path[n - 1] == '/' ? "" : "/";
	struct dirent *entry;
	struct stat st;
	int ret = 0;
	int child;
	DIR *dir;

	dir = fdopendir(fd);
	if (!dir) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((entry = readdir(dir))) {
		if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		if ((size_t)snprintf(path + n, size - n, "%s%s", sep, entry->d_name) >= size - n)
			continue;
		ret = fn(ctx, path, &st);
		if (ret)
			goto out;
		child = openat(dirfd(dir), entry->d_name,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child >= 0) {
			ret = walk_below(child, path, size, dev, fn, ctx);
			if (ret)
				goto out;
		}
		path[n] = '\0';
	}
out:
	path[n] = '\0';
	closedir(dir);
	return ret;
}

/* Calls fn on root and every directory below it. 0 when all were seen, 1 when fn stopped. */
static int walk_tree(const char *root, walk_fn fn, void *ctx)
{
	char path[PATH_MAX];
	struct stat st;
	int ret, fd;

	ret = copy_path(path, sizeof(path), root);
	if (ret)
		return ret;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	ret = fn(ctx, path, &st);
	if (ret)
		goto out;
	return walk_below(fd, path, sizeof(path), st.st_dev, fn, ctx);
out:
	close(fd);
	return ret;
}

struct id_search {
	uint64_t id;
	char *path;
	size_t size;
	int ret;
};

static int match_id(void *ctx, const char *path, const struct stat *st)
{
	struct id_search *search = ctx;

	if (st->st_ino != search->id)
		return 0;
	search->ret = copy_path(search->path, search->size, path);
	return 1;
}

int cgroup_resolve(const struct cgroup_mount *m, const char *spec, char *path, size_t len,
		   uint64_t *id)
{
	char found[PATH_MAX];
	struct id_search search = { .path = found, .size = sizeof(found), .ret = -ENOENT };
	bool absolute = spec[0] == '/';
	uint64_t cgid = 0;
	int ret;

	if (!*spec)
		return -EINVAL;
	ret = build_path(found, sizeof(found), absolute ? spec : m->path, absolute ? NULL : spec);
	if (ret)
		return ret;
	if (!path_below(m->path, found))
		return -EINVAL;
	ret = cgroup_id_of_path(found, &cgid);
	if (ret == -ENOENT && !absolute && is_decimal(spec)) {
		errno = 0;
		search.id = strtoull(spec, NULL, 10);
		if (errno)
			return -ENOENT;
		ret = walk_tree(m->path, match_id, &search);
		if (ret >= 0)
			ret = search.ret;
		cgid = search.id;
	}
	if (ret)
		return ret;
	ret = copy_path(path, len, found);
	if (ret)
		return ret;
	*id = cgid;
	return 0;
}

struct path_search {
	const struct cgroup_mount *mount;
	bool (*match)(const char *below, void *ctx);
	void *ctx;
	char *path;
	size_t size;
	uint64_t id;
	int ret;
};

static int match_path(void *ctx, const char *path, const struct stat *st)
{
	struct path_search *search = ctx;

	if (!search->match(cgroup_label(search->mount, path), search->ctx))
		return 0;
	search->id = st->st_ino;
	search->ret = copy_path(search->path, search->size, path);
	return 1;
}

int cgroup_find(const struct cgroup_mount *m, bool (*match)(const char *below, void *ctx),
		void *ctx, char *path, size_t len, uint64_t *id)
{
	struct path_search search = {
		.mount = m, .match = match, .ctx = ctx, .path = path, .size = len, .ret = -ENOENT
	};
	int ret = walk_tree(m->path, match_path, &search);

	if (ret < 0)
		return ret;
	if (!search.ret)
		*id = search.id;
	return search.ret;
}

/* ENOENT from PROC/PID/cgroup means no such process only when PROC/PID is gone too. */
static int open_failure(const char *proc, int pid)
{
	char dir[PATH_MAX];
	int err = errno;

	if (err != ENOENT)
		return -err;
	snprintf(dir, sizeof(dir), "%s/%d", proc, pid);
	return access(dir, F_OK) && errno == ENOENT ? -ESRCH : -ENOENT;
}

/*
 * The cgroup of a process in one hierarchy, from its PROC/PID/cgroup line
 * "HIERARCHY-ID:CONTROLLERS:PATH": the v2 one ("0::") when controller is NULL, else the v1 one
 * whose controllers include it. The absolute path under m, which shows that hierarchy.
 */
static int pid_cgroup_path(const struct cgroup_mount *m, const char *proc, int pid,
			   const char *controller, char *path, size_t len)
{
	static const char deleted[] = " (deleted)";
	char file[PATH_MAX], full[PATH_MAX];
	const char *cgroup = NULL, *below_root;
	char *line = NULL, *controllers, *colon;
	size_t size = 0, cgroup_len;
	ssize_t line_len;
	int ret;
	FILE *f;

	if (pid <= 0)
		return -ESRCH;
	if ((size_t)snprintf(file, sizeof(file), "%s/%d/cgroup", proc, pid) >= sizeof(file))
		return -ENAMETOOLONG;
	f = fopen(file, "re");
	if (!f)
		return open_failure(proc, pid);
	errno = 0;
	while ((line_len = getline(&line, &size, f)) != -1) {
		if (line[line_len - 1] == '\n')
			line[line_len - 1] = '\0';
		controllers = strchr(line, ':');
		colon = controllers ? strchr(controllers + 1, ':') : NULL;
		if (!colon)
			continue;
		*colon = '\0';
		*controllers++ = '\0';
		if (controller ? list_has(controllers, controller)
			       : !strcmp(line, "0") && !*controllers) {
			cgroup = colon + 1;
			break;
		}
	}
	/* A process that exits while its file is read gives ESRCH. */
	if (!cgroup) {
		ret = ferror(f) ? (errno ? -errno : -EIO) : -ENOENT;
		goto out;
	}
	cgroup_len = strlen(cgroup);
	ret = -ENOENT;
	if (cgroup[0] != '/' || (cgroup_len >= sizeof(deleted) - 1 &&
				 !strcmp(cgroup + cgroup_len - (sizeof(deleted) - 1), deleted)))
		goto out;
	/* The file names cgroups from the hierarchy's root; the mount may show a subtree. */
	if (strcmp(m->root, "/")) {
		below_root = path_below(m->root, cgroup);
		if (below_root)
			cgroup = below_root;
	}
	ret = build_path(full, sizeof(full), m->path, cgroup);
	if (ret)
		goto out;
	/* Paths from another cgroup namespace start with "/..": not visible through this mount. */
	ret = -ENOENT;
	if (!path_below(m->path, full))
		goto out;
	ret = copy_path(path, len, full);
out:
	free(line);
	fclose(f);
	return ret;
}

int cgroup_of_pid(const struct cgroup_mount *m, const char *proc, int pid, char *path, size_t len,
		  uint64_t *id)
{
	int ret = pid_cgroup_path(m, proc, pid, NULL, path, len);

	return ret ? ret : cgroup_id_of_path(path, id);
}

int cgroup_v1_of_pid(const struct cgroup_mount *m, const char *proc, int pid,
		     const char *controller, char *path, size_t len)
{
	return pid_cgroup_path(m, proc, pid, controller, path, len);
}

const char *cgroup_label(const struct cgroup_mount *m, const char *path)
{
	const char *below = path_below(m->path, path);

	if (!below)
		return path;
	return *below ? below : "/";
}

/*
 * One cgroup's path and label, in cgroup_names' table by id. The label is the path's own
 * string unless the cgroup is a container's, a pod's or a unit's (sources/container_path.h).
 */
struct name_entry {
	struct hash_node node;
	uint64_t id;
	char *path; /* under the mount: "/" for its root; "#1234" until a walk finds it */
	char *label;
	/* a container's or a pod's cgroup, with runtime names: what they say of it; else NULL */
	struct cg_container *container;
	uint32_t walk;	 /* the last walk that found the cgroup */
	bool handed_out; /* returned by cgroup_names__get(): kept until forgotten */
};

struct cgroup_names {
	struct cgroup_mount mount;
	struct hash_table table;
	uint32_t walk; /* walks so far */
	bool walked;   /* the tree was walked since the last cgroup_names__new_interval() */
	/*
	 * Fallbacks handed out and then replaced by a real label within the interval: a record
	 * may still point at one (a preempter labelled "#id" before its cgroup's own row named
	 * it), so they are freed at the next interval.
	 */
	char **replaced;
	size_t nr_replaced;
	/* the runtimes' names for containers, when followed; the generation labelled with */
	struct container_names *containers;
	unsigned long containers_generation;
};

#define NAMES_INITIAL_BUCKETS 256

static bool entry_has_id(const struct hash_node *n, const void *id)
{
	return container_of(n, struct name_entry, node)->id == *(const uint64_t *)id;
}

static struct name_entry *find_entry(const struct cgroup_names *names, uint64_t id)
{
	struct hash_node *n = hash_table_find(&names->table, hash_u64(id), entry_has_id, &id);

	return n ? container_of(n, struct name_entry, node) : NULL;
}

/* "#1234": the path and label of an id no walk has found (yet); no real one starts so. */
static bool is_fallback(const char *label)
{
	return label[0] == '#';
}

static void entry_strings_free(char *path, char *label)
{
	if (label != path)
		free(label);
	free(path);
}

/* The label of path (under the mount), in buf or path itself. */
static const char *label_of(const struct cgroup_names *names, const char *path, char *buf,
			    size_t len)
{
	if (is_fallback(path))
		return path;
	if (names->containers)
		return container_names__label(names->containers, path, buf, len);
	return container_or_path_label(path, buf, len);
}

/* e's path, a copy of path, and its label. 0 or -ENOMEM (e unchanged). */
static int entry_strings_set(const struct cgroup_names *names, struct name_entry *e,
			     const char *path)
{
	char buf[PATH_MAX], *p, *l;
	const char *label = label_of(names, path, buf, sizeof(buf));

	p = strdup(path);
	if (!p)
		return -ENOMEM;
	l = p;
	if (label != path) {
		l = strdup(label);
		if (!l) {
			free(p);
			return -ENOMEM;
		}
	}
	e->path = p;
	e->label = l;
	return 0;
}

/* What the runtimes say of e's container or pod, kept up in e->container (NULL: none). */
static void entry_container_set(const struct cgroup_names *names, struct name_entry *e)
{
	struct cg_container c;

	if (!names->containers || is_fallback(e->path) ||
	    container_names__describe(names->containers, e->path, &c))
		return;
	if (!e->container)
		e->container = malloc(sizeof(*e->container));
	if (e->container)
		*e->container = c;
}

/*
 * id's entry, made for path (under the mount) when id has none. A stored label is kept, so
 * that pointers handed out stay valid, except a fallback ("#1234"), which a real path and its
 * label replace (one handed out is freed at the next interval).
 * NULL with errno when out of memory.
 */
static struct name_entry *names_insert(struct cgroup_names *names, uint64_t id, const char *path)
{
	struct name_entry *e = find_entry(names, id);
	struct name_entry real;
	char **grown;

	if (e) {
		if (is_fallback(e->path) && !is_fallback(path)) {
			if (entry_strings_set(names, &real, path)) {
				errno = ENOMEM;
				return NULL;
			}
			if (e->handed_out) {
				grown = realloc(names->replaced,
						(names->nr_replaced + 1) * sizeof(*grown));
				if (!grown) {
					/* keep the fallback, still valid, rather than free it */
					entry_strings_free(real.path, real.label);
					return e;
				}
				names->replaced = grown;
				/* a fallback's label is its path's string */
				names->replaced[names->nr_replaced++] = e->path;
			} else {
				free(e->path);
			}
			e->path = real.path;
			e->label = real.label;
			entry_container_set(names, e);
		}
		return e;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (entry_strings_set(names, e, path)) {
		free(e);
		errno = ENOMEM;
		return NULL;
	}
	entry_container_set(names, e);
	e->id = id;
	hash_table_add(&names->table, &e->node, hash_u64(id));
	return e;
}

static int record_name(void *ctx, const char *path, const struct stat *st)
{
	struct cgroup_names *names = ctx;
	struct name_entry *e;

	e = names_insert(names, st->st_ino, cgroup_label(&names->mount, path));
	if (!e)
		return -errno;
	e->walk = names->walk;
	return 0;
}

static void entry_free(struct name_entry *e)
{
	free(e->container);
	entry_strings_free(e->path, e->label);
	free(e);
}

/*
 * After a walk, drop what it did not find and nobody was given: cgroups made and removed
 * without ever running a task are found by some walk but never forgotten by the drain, and
 * would otherwise stay for the whole run.
 */
static void drop_if_unseen(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct name_entry *e = container_of(n, struct name_entry, node);
	const struct cgroup_names *names = ctx;

	if (e->handed_out || e->walk == names->walk)
		return;
	hash_table_del(t, n);
	entry_free(e);
}

struct cgroup_names *cgroup_names__new(const struct cgroup_mount *m)
{
	struct cgroup_names *names;
	struct name_entry *root;
	struct stat st;

	names = calloc(1, sizeof(*names));
	if (!names)
		return NULL;
	if (hash_table_init(&names->table, NAMES_INITIAL_BUCKETS)) {
		free(names);
		errno = ENOMEM;
		return NULL;
	}
	names->mount = *m;
	/*
	 * The mount's own cgroup is "/" without a walk: a walk of a host's tree for the root,
	 * which preempts everyone, cost 5 to 38 ms once in every run (1,000 cgroups, churn).
	 */
	if (!stat(m->path, &st)) {
		root = names_insert(names, st.st_ino, "/");
		if (!root) {
			cgroup_names__free(names);
			return NULL;
		}
		root->handed_out = true;
	}
	return names;
}

/*
 * NULL with errno only when out of memory. A walk that fails otherwise (the mount went away)
 * leaves the id labelled by its number, like a cgroup removed before the walk.
 */
const char *cgroup_names__get(struct cgroup_names *names, uint64_t id)
{
	struct name_entry *e = find_entry(names, id);
	char fallback[24];
	int ret;

	if (e && !(is_fallback(e->path) && !names->walked)) {
		e->handed_out = true;
		return e->label;
	}
	/*
	 * One walk records every cgroup there is; an id it did not find is a cgroup removed
	 * already, and walking again for each of those would cost a walk per removed cgroup.
	 */
	if (!names->walked) {
		names->walked = true;
		names->walk++;
		ret = walk_tree(names->mount.path, record_name, names);
		if (ret == -ENOMEM) {
			errno = ENOMEM;
			return NULL;
		}
		/* a walk cut short did not see everything there is */
		if (!ret)
			hash_table_visit(&names->table, drop_if_unseen, names);
		e = find_entry(names, id);
		if (e) {
			e->handed_out = true;
			return e->label;
		}
	}
	/* Inserting keeps what the walk recorded; the fallback is stored only when it found
	 * nothing. */
	snprintf(fallback, sizeof(fallback), "#%" PRIu64, id);
	e = names_insert(names, id, fallback);
	if (!e)
		return NULL;
	e->handed_out = true;
	return e->label;
}

const char *cgroup_names__known(struct cgroup_names *names, uint64_t id)
{
	const char *label = cgroup_names__stored(names, id);

	return label && !is_fallback(label) ? label : NULL;
}

const char *cgroup_names__path(const struct cgroup_names *names, uint64_t id)
{
	const struct name_entry *e = find_entry(names, id);

	return e && !is_fallback(e->path) ? e->path : NULL;
}

const char *cgroup_names__stored(struct cgroup_names *names, uint64_t id)
{
	struct name_entry *e = find_entry(names, id);

	if (!e)
		return NULL;
	e->handed_out = true;
	return e->label;
}

const char *cgroup_names__add_child(struct cgroup_names *names, uint64_t id, uint64_t parent_id,
				    const char *leaf)
{
	const struct name_entry *parent = find_entry(names, parent_id);
	char path[PATH_MAX];
	struct name_entry *e;
	int n;

	if (!*leaf || !parent || is_fallback(parent->path)) {
		errno = ENOENT;
		return NULL;
	}
	/* the root's children: "/" + leaf, not "//" + leaf */
	n = snprintf(path, sizeof(path), "%s/%s", strcmp(parent->path, "/") ? parent->path : "",
		     leaf);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	e = names_insert(names, id, path);
	if (!e)
		return NULL;
	e->handed_out = true;
	return e->label;
}

static void free_replaced(struct cgroup_names *names)
{
	for (size_t i = 0; i < names->nr_replaced; i++)
		free(names->replaced[i]);
	free(names->replaced);
	names->replaced = NULL;
	names->nr_replaced = 0;
}

/* A label to free at the next interval, or now when nobody was given it. */
static void retire_label(struct cgroup_names *names, struct name_entry *e)
{
	char **grown;

	if (e->label == e->path)
		return;
	if (e->handed_out) {
		grown = realloc(names->replaced, (names->nr_replaced + 1) * sizeof(*grown));
		if (!grown)
			return; /* kept for the run: a leak, not a dangling label */
		names->replaced = grown;
		names->replaced[names->nr_replaced++] = e->label;
	} else {
		free(e->label);
	}
}

/* A container's or a pod's cgroup labelled again with the runtimes' names as they are now. */
static void relabel_container(struct hash_table *t, struct hash_node *n, void *ctx)
{
	struct name_entry *e = container_of(n, struct name_entry, node);
	struct cgroup_names *names = ctx;
	char buf[PATH_MAX], *copy;
	const char *label;

	(void)t;
	if (!e->container)
		return;
	entry_container_set(names, e);
	label = label_of(names, e->path, buf, sizeof(buf));
	if (!strcmp(label, e->label))
		return;
	copy = label == e->path ? e->path : strdup(label);
	if (!copy)
		return;
	retire_label(names, e);
	e->label = copy;
}

void cgroup_names__new_interval(struct cgroup_names *names)
{
	unsigned long generation;

	names->walked = false;
	free_replaced(names);
	if (!names->containers)
		return;
	/* a name the runtime gave, changed or took back since: rows are labelled by the new */
	generation = container_names__generation(names->containers);
	if (generation != names->containers_generation) {
		names->containers_generation = generation;
		hash_table_visit(&names->table, relabel_container, names);
	}
}

void cgroup_names__use_containers(struct cgroup_names *names, struct container_names *containers)
{
	names->containers = containers;
	names->containers_generation = containers ? container_names__generation(containers) : 0;
}

const struct cg_container *cgroup_names__container(const struct cgroup_names *names, uint64_t id)
{
	const struct name_entry *e = find_entry(names, id);

	return e ? e->container : NULL;
}

void cgroup_names__forget(struct cgroup_names *names, uint64_t id)
{
	struct name_entry *e = find_entry(names, id);

	if (!e)
		return;
	hash_table_del(&names->table, &e->node);
	entry_free(e);
}

size_t cgroup_names__size(const struct cgroup_names *names)
{
	return names->table.nr_nodes;
}

static void free_entry_of(struct hash_table *t, struct hash_node *n, void *ctx)
{
	(void)t;
	(void)ctx;
	entry_free(container_of(n, struct name_entry, node));
}

void cgroup_names__free(struct cgroup_names *names)
{
	if (!names)
		return;
	hash_table_visit(&names->table, free_entry_of, NULL);
	hash_table_fini(&names->table);
	free_replaced(names);
	free(names);
}
