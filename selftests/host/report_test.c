// SPDX-License-Identifier: GPL-2.0
/*
 * pevt report against Debian's perf report on the same files, recorded
 * here with the host's perf (file, pipe, --threads directory, zstd), and
 * the perf.data reader and its ordering on synthetic files (unknown
 * record types, truncated and corrupt files, rounds, k-way merge).
 */
// LDLIBS: -lzstd -lelf -liberty
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <pevt/data_reader.h>
#include <pevt/ordered.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

#define WORKLOAD "sh -c 'for i in $(seq 1 20); do ls /usr/bin >/dev/null; done; " \
		 "dd if=/dev/urandom bs=1M count=3 2>/dev/null | gzip >/dev/null'"

static char pevt_bin[PATH_MAX];
static char dir[PATH_MAX];

/* build/tests/host/report -> build/bin/pevt */
static void find_pevt(void)
{
	char self[PATH_MAX - 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *p;

	if (n <= 0)
		return;
	self[n] = 0;
	p = strstr(self, "/tests/host/");
	if (!p)
		return;
	*p = 0;
	snprintf(pevt_bin, sizeof(pevt_bin), "%s/bin/pevt", self);
}

/*
 * The recordings, made once per run (each TEST is a forked child: the
 * parent's pid names the directory, mkdir() elects who records).
 */
static int fixtures(void)
{
	char done[PATH_MAX + 16];
	struct out o;
	int i;

	find_pevt();
	if (access("/usr/bin/perf", X_OK) || access(pevt_bin, X_OK))
		return -ENOENT;
	snprintf(dir, sizeof(dir), "/tmp/pevt-report-test.%d", getppid());
	snprintf(done, sizeof(done), "%s/done", dir);
	if (mkdir(dir, 0700) && errno == EEXIST) {
		for (i = 0; i < 600 && access(done, F_OK); i++)
			usleep(100000);
		return access(done, F_OK) ? -ETIMEDOUT : 0;
	}
	run(&o, "cd %s && perf record -q -e cpu-clock -g -o file.data -- " WORKLOAD
	    " && perf record -q -e cpu-clock -g -o - -- " WORKLOAD " > pipe.data"
	    " && perf record -q -e cpu-clock -g -z -o zstd.data -- " WORKLOAD
	    " && perf record -q -e cpu-clock -g --threads -o dir.data -- " WORKLOAD
	    " && perf record -q -e cpu-clock -o nocg.data -- " WORKLOAD
	    " && head -c $(( $(stat -c %%s file.data) / 2 )) file.data > trunc.data && touch done", dir);
	out_free(&o);
	return access(done, F_OK) ? -EIO : 0;
}

#define NEED_FIXTURES()							\
	do {								\
		if (fixtures())						\
			SKIP(return, "no /usr/bin/perf, pevt or perf record failed"); \
	} while (0)

/*
 * Number of differing lines between perf report and pevt report (the
 * random "Tip" line dropped); @sorted compares the rows as sets.
 */
static int report_diff(const char *file, const char *args, bool sorted, char *log, size_t sz)
{
	/*
	 * As sets, without rows of unresolved addresses outside any map:
	 * perf's signed address comparison is not transitive for addresses
	 * 2^63 apart (garbage frames), which can split one entry in two.
	 */
	const char *s = sorted ? " | grep -v '\\[unknown\\]  *\\[.\\] [0-9a-fx]*$' | sort" : "";
	struct out o;
	int n;

	run(&o, "cd %s && perf report --stdio -i %s %s 2>/dev/null | grep -v '(Tip' %s > a.%d"
	    " && %s report --stdio -i %s %s 2>/dev/null | grep -v '(Tip' %s > b.%d;"
	    " diff a.%d b.%d | head -6 >&2; diff a.%d b.%d | grep -c '^[<>]'",
	    dir, file, args, s, getpid(), pevt_bin, file, args, s, getpid(),
	    getpid(), getpid(), getpid(), getpid());
	snprintf(log, sz, "%s", o.err);
	n = atoi(o.out);
	out_free(&o);
	return n;
}

static const char *const exact_args[] = {
	"--no-children -g none",
	"--no-children -g none --sort pid",
	"--no-children -g none --sort cpu",
	"--no-children -g none --sort comm,dso",
	"--no-children -g none --sort dso,sym",
	"--no-children -g none --percent-limit 1",
	"--stats",
};

/* With --children, rows with equal percentages and unresolved garbage
 * addresses may come in another order (Documentation/report.md). */
static const char *const set_args[] = {
	"--children -g none",
	"--children -g none --sort comm,dso",
	"--children -g none --sort pid",
	"--children -g none --percent-limit 0.5",
};

static void compare_all(struct __test_metadata *_metadata, const char *file, bool children)
{
	char log[4096];
	size_t i;

	for (i = 0; i < sizeof(exact_args) / sizeof(exact_args[0]); i++) {
		int n = report_diff(file, exact_args[i], false, log, sizeof(log));

		if (n)
			TH_LOG("%s %s:\n%s", file, exact_args[i], log);
		EXPECT_EQ(0, n);
	}
	for (i = 0; children && i < sizeof(set_args) / sizeof(set_args[0]); i++) {
		int n = report_diff(file, set_args[i], true, log, sizeof(log));

		if (n)
			TH_LOG("%s %s:\n%s", file, set_args[i], log);
		EXPECT_EQ(0, n);
	}
}

/* Recording and reporting under a loaded 2-core host: generous timeouts. */
FIXTURE(perf) {};
FIXTURE_SETUP(perf) {}
FIXTURE_TEARDOWN(perf) {}

TEST_F_TIMEOUT(perf, file, 300)
{
	NEED_FIXTURES();
	compare_all(_metadata, "file.data", true);
}

TEST_F_TIMEOUT(perf, pipe, 300)
{
	char log[4096];
	struct out o;

	NEED_FIXTURES();
	compare_all(_metadata, "pipe.data", true);
	/* from stdin too */
	run(&o, "cd %s && perf report --stdio -i - -g none < pipe.data 2>/dev/null | grep -v '(Tip' > a;"
	    " %s report -i - -g none < pipe.data | grep -v '(Tip' > b; diff a b | grep -c '^[<>]'",
	    dir, pevt_bin);
	snprintf(log, sizeof(log), "%s", o.out);
	EXPECT_EQ(0, atoi(o.out)) TH_LOG("%s", log);
	out_free(&o);
}

TEST_F_TIMEOUT(perf, zstd, 300)
{
	NEED_FIXTURES();
	compare_all(_metadata, "zstd.data", true);
}

TEST_F_TIMEOUT(perf, threads_dir, 300)
{
	NEED_FIXTURES();
	compare_all(_metadata, "dir.data", true);
}

TEST_F_TIMEOUT(perf, no_callchains, 300)
{
	char log[4096];
	int n;

	NEED_FIXTURES();
	compare_all(_metadata, "nocg.data", false);
	/* the default (no options) too: no callchains, no children */
	n = report_diff("nocg.data", "", false, log, sizeof(log));
	EXPECT_EQ(0, n) TH_LOG("%s", log);
}

/* The same bytes for any number of threads, with and without children. */
TEST_F_TIMEOUT(perf, threads_identical, 300)
{
	static const char *const files[] = { "file.data", "zstd.data", "pipe.data", "dir.data" };
	static const char *const modes[] = { "--children -g none", "--no-children -g none --sort pid" };
	struct out o;
	size_t f, m;

	NEED_FIXTURES();
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
			run(&o, "cd %s && for n in 1 2 3 7; do %s report -i %s %s --threads $n | md5sum;"
			    " done | sort -u | wc -l", dir, pevt_bin, files[f], modes[m]);
			EXPECT_EQ(1, atoi(o.out)) TH_LOG("%s %s: %s", files[f], modes[m], o.err);
			out_free(&o);
		}
	}
}

/* pevt bench report: six runs per file, pevt's rows the same as perf's. */
TEST_F_TIMEOUT(perf, bench_report, 300)
{
	struct out o;
	char *j, *p;
	int runs = 0, same = 0;

	NEED_FIXTURES();
	run(&o, "cd %s && %s bench report threads 2 json bench.json nocg.data && cat bench.json",
	    dir, pevt_bin);
	ASSERT_EQ(0, o.status) TH_LOG("%s", o.err);
	j = strchr(o.out, '[');
	ASSERT_NE(NULL, j) TH_LOG("%s", o.out);
	for (p = j; (p = strstr(p, "\"tool\":")); p++)
		runs++;
	for (p = j; (p = strstr(p, "\"same_as_perf\":true")); p++)
		same++;
	EXPECT_EQ(6, runs);
	EXPECT_EQ(2, same) TH_LOG("%s", o.out);
	EXPECT_EQ(NULL, strstr(j, "\"exit\":1"));
	out_free(&o);
}

TEST_F_TIMEOUT(perf, truncated_file, 300)
{
	struct out o;

	NEED_FIXTURES();
	run(&o, "%s report -i %s/trunc.data -g none --no-children", pevt_bin, dir);
	EXPECT_NE(0, o.status);
	/* names the record and its offset, then reports what came before */
	EXPECT_NE(NULL, strstr(o.err, "truncated")) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.err, "at offset 0x")) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.out, "# Samples: ")) TH_LOG("%s", o.out);
	out_free(&o);
}

/* ---------------------------------------------------- synthetic files */

struct synth {
	uint8_t buf[1 << 16];
	size_t len;
};

static void put(struct synth *s, const void *p, size_t n)
{
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* A sample: IP|TID|TIME|PERIOD, then sample_id_all trailers TID|TIME. */
static void sample(struct synth *s, uint64_t ip, uint32_t pid, uint64_t time)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 40 };
	uint64_t body[4] = { ip, pid | (uint64_t)pid << 32, time, 1000 };

	put(s, &h, sizeof(h));
	put(s, body, sizeof(body));
}

static void comm(struct synth *s, uint32_t pid, const char *name, uint64_t time)
{
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 8 + 8 + 16 + 16 };
	char n[16] = { 0 };
	uint64_t tr[2] = { pid | (uint64_t)pid << 32, time };

	strncpy(n, name, sizeof(n) - 1);
	put(s, &h, sizeof(h));
	put(s, &pid, 4);
	put(s, &pid, 4);
	put(s, n, sizeof(n));
	put(s, tr, sizeof(tr));
}

static void raw(struct synth *s, uint32_t type, uint16_t size)
{
	struct perf_event_header h = { type, 0, size };
	uint8_t z[64] = { 0 };

	put(s, &h, sizeof(h));
	put(s, z, size - sizeof(h));
}

/* Write a file-mode perf.data with one attr and @data as the data section. */
static void write_file(const char *path, const struct synth *data)
{
	struct perf_file_header fh = { 0 };
	struct perf_file_attr fa = { 0 };
	uint64_t id = 1;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fa.attr.type = PERF_TYPE_SOFTWARE;
	fa.attr.config = PERF_COUNT_SW_CPU_CLOCK;
	fa.attr.size = sizeof(fa.attr);
	fa.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_PERIOD;
	fa.attr.sample_id_all = 1;
	fh.magic = PERF_MAGIC2;
	fh.size = sizeof(fh);
	fh.attr_size = sizeof(fa);
	fh.attrs.offset = sizeof(fh) + 8;
	fh.attrs.size = sizeof(fa);
	fa.ids.offset = sizeof(fh);
	fa.ids.size = 8;
	fh.data.offset = sizeof(fh) + 8 + sizeof(fa);
	fh.data.size = data->len;
	if (write(fd, &fh, sizeof(fh)) < 0 || write(fd, &id, 8) < 0 ||
	    write(fd, &fa, sizeof(fa)) < 0 || write(fd, data->buf, data->len) < 0)
		perror("write");
	close(fd);
}

struct collect {
	uint64_t times[256];
	int nr;
};

static int collect_cb(struct pevt_data *d, const struct pevt_data_rec *r, uint64_t t, void *ctx)
{
	struct collect *c = ctx;

	if (r->ev->type == PERF_RECORD_SAMPLE && c->nr < 256)
		c->times[c->nr++] = t;
	return 0;
}

static void tmpname(char *buf, size_t sz, const char *what)
{
	snprintf(buf, sz, "/tmp/pevt-report-synth.%d.%s", getpid(), what);
}

TEST(unknown_types_counted)
{
	static struct synth s;
	struct pevt_ordered_stats st;
	struct collect c = { 0 };
	struct pevt_data *d;
	char path[256];

	tmpname(path, sizeof(path), "unknown");
	comm(&s, 10, "worker", 1);
	sample(&s, 0x1000, 10, 2);
	raw(&s, 200, 24);	/* not a perf type */
	raw(&s, 63, 16);	/* not a kernel type either */
	sample(&s, 0x1000, 10, 3);
	write_file(path, &s);
	d = pevt_data__open(path);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(1, pevt_data__nr_streams(d)) TH_LOG("%s", pevt_data__error(d));
	EXPECT_EQ(0, pevt_ordered__run(d, NULL, collect_cb, &c, &st));
	EXPECT_EQ(2, c.nr);
	EXPECT_EQ(2ull, pevt_data__stats(d)->nr_unknown);
	EXPECT_EQ(2ull, pevt_data__stats(d)->nr[PERF_RECORD_SAMPLE]);
	pevt_data__delete(d);
	unlink(path);
}

TEST(corrupt_record_size)
{
	static struct synth s;
	struct pevt_ordered_stats st;
	struct collect c = { 0 };
	struct pevt_data *d;
	char path[256], want[64];
	size_t bad;
	uint64_t off;

	tmpname(path, sizeof(path), "corrupt");
	sample(&s, 0x1000, 10, 1);
	sample(&s, 0x1000, 10, 2);
	bad = s.len;
	raw(&s, PERF_RECORD_SAMPLE, 40);
	((struct perf_event_header *)(s.buf + bad))->size = 4;	/* < header */
	sample(&s, 0x1000, 10, 3);
	write_file(path, &s);
	d = pevt_data__open(path);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(-EBADMSG, pevt_ordered__run(d, NULL, collect_cb, &c, &st));
	/* everything before the bad record was delivered */
	EXPECT_EQ(2, c.nr);
	ASSERT_NE(NULL, pevt_data__error(d));
	off = sizeof(struct perf_file_header) + 8 + sizeof(struct perf_file_attr) + bad;
	snprintf(want, sizeof(want), "at offset %#llx", (unsigned long long)off);
	EXPECT_NE(NULL, strstr(pevt_data__error(d), want))
		TH_LOG("%s (want %s)", pevt_data__error(d), want);
	pevt_data__delete(d);
	unlink(path);
}

TEST(bad_header)
{
	char path[256];
	struct pevt_data *d;
	int fd;

	tmpname(path, sizeof(path), "hdr");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_EQ(12, write(fd, "NOTPERFDATA!", 12));
	close(fd);
	d = pevt_data__open(path);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, pevt_data__nr_streams(d));
	EXPECT_NE(NULL, strstr(pevt_data__error(d), "offset 0")) TH_LOG("%s", pevt_data__error(d));
	pevt_data__delete(d);
	unlink(path);
}

/*
 * Weisbecker: rounds hold out-of-order records; what is older than the
 * previous round's newest record is flushed at each FINISHED_ROUND, so
 * the output is sorted and the queue never holds more than two rounds.
 */
TEST(rounds_reorder)
{
	static struct synth s;
	static const uint64_t in[] = { 5, 3, 1, 0, 4, 8, 2, 0, 9, 7, 6, 0, 12, 10, 11 };
	struct pevt_ordered_opts o = { .sz = sizeof(o), .mem_cap = 1 };
	struct pevt_ordered_stats st;
	struct collect c = { 0 };
	struct pevt_data *d;
	char path[256];
	size_t i;
	int j;

	tmpname(path, sizeof(path), "rounds");
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		if (in[i])
			sample(&s, 0x1000, 10, in[i]);
		else
			raw(&s, PERF_RECORD_FINISHED_ROUND, 8);
	}
	write_file(path, &s);
	d = pevt_data__open(path);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(0, pevt_ordered__run(d, NULL, collect_cb, &c, &st));
	ASSERT_EQ(12, c.nr);
	for (j = 0; j < c.nr; j++)
		EXPECT_EQ((uint64_t)j + 1, c.times[j]);
	EXPECT_EQ(0ull, st.nr_misordered);
	EXPECT_EQ(3ull, st.nr_rounds);
	/* at most two rounds (3 + 3 samples) queued, never all 12 */
	EXPECT_GE(6ull, st.max_queued);
	pevt_data__delete(d);

	/* a cap of one record forces half-flushes: bounded, misorders counted */
	d = pevt_data__open(path);
	c.nr = 0;
	EXPECT_EQ(0, pevt_ordered__run(d, &o, collect_cb, &c, &st));
	EXPECT_EQ(12, c.nr);
	EXPECT_LT(0ull, st.nr_cap_flushes);
	EXPECT_LT(0ull, st.nr_misordered);
	EXPECT_GE(2ull, st.max_queued);
	pevt_data__delete(d);
	unlink(path);
}

/* --threads directory: data + data.N streams merged by time, bounded. */
TEST(dir_merge)
{
	static struct synth s0, s1, s2;
	struct pevt_ordered_opts o = { .sz = sizeof(o), .window = 4 };
	struct pevt_ordered_stats st;
	struct collect c = { 0 };
	struct pevt_data *d;
	char path[256], f[300];
	int j, fd;

	tmpname(path, sizeof(path), "dir");
	mkdir(path, 0700);
	comm(&s0, 10, "worker", 0);
	for (j = 0; j < 20; j++) {
		/* stream 1: even times, stream 2: odd times, one pair swapped */
		sample(&s1, 0x1000, 10, 2 * j + 2);
		sample(&s2, 0x1000, 10, j == 5 ? 2 * j + 3 + 2 : j == 6 ? 2 * j + 1 : 2 * j + 1);
	}
	snprintf(f, sizeof(f), "%s/data", path);
	write_file(f, &s0);
	snprintf(f, sizeof(f), "%s/data.0", path);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_EQ((ssize_t)s1.len, write(fd, s1.buf, s1.len));
	close(fd);
	snprintf(f, sizeof(f), "%s/data.1", path);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_EQ((ssize_t)s2.len, write(fd, s2.buf, s2.len));
	close(fd);
	d = pevt_data__open(path);
	ASSERT_NE(NULL, d);
	ASSERT_EQ(3, pevt_data__nr_streams(d)) TH_LOG("%s", pevt_data__error(d));
	EXPECT_EQ(0, pevt_ordered__run(d, &o, collect_cb, &c, &st));
	ASSERT_EQ(40, c.nr);
	for (j = 1; j < c.nr; j++)
		EXPECT_LE(c.times[j - 1], c.times[j]) TH_LOG("at %d", j);
	EXPECT_EQ(0ull, st.nr_misordered);
	pevt_data__delete(d);
	snprintf(f, sizeof(f), "rm -rf %s", path);
	ASSERT_EQ(0, system(f));
}

TEST_F(perf, zz_cleanup)
{
	char cmd[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "/tmp/pevt-report-test.%d", getppid());
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
