/* SPDX-License-Identifier: MIT */
/* auth: basic-auth file, header parsing, bcrypt verification, cache. */
#include "auth.h"

#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define FILE_MAX (1024 * 1024)
#define USERS_MAX 10000
#define HASH_LEN 60 /* $2y$NN$ + 22 characters of salt + 31 of hash */
#define CACHE_SLOTS 32
#define CACHE_TTL_NS (300 * UINT64_C(1000000000))
#define DIGEST_LEN 32

struct user {
	char name[AUTH_USER_MAX];
	char hash[HASH_LEN + 1];
};

struct cache_slot {
	uint8_t digest[DIGEST_LEN];
	uint64_t expires_ns; /* 0: empty */
};

struct auth_db {
	size_t n_users;
	struct user *users;
	pthread_mutex_t lock; /* guards the cache */
	uint8_t key[DIGEST_LEN];
	struct cache_slot cache[CACHE_SLOTS];
	unsigned next_slot;
};

static unsigned cost_of(const char *hash)
{
	return (unsigned)((hash[4] - '0') * 10 + (hash[5] - '0'));
}

static bool is_bcrypt(const char *h)
{
	static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != HASH_LEN || h[0] != '$' || h[1] != '2' ||
	    (h[2] != 'y' && h[2] != 'b' && h[2] != 'a') || h[3] != '$' ||
	    !isdigit((unsigned char)h[4]) || !isdigit((unsigned char)h[5]) || h[6] != '$')
		return false;
	if ((h[4] - '0') * 10 + (h[5] - '0') < 4)
		return false;
	for (size_t i = 7; i < HASH_LEN; i++)
		if (!strchr(alphabet, h[i]) || !h[i])
			return false;
	return true;
}

int auth_db_parse(const char *name, const char *text, size_t len, struct auth_db **ret,
		  struct config_diag *diag)
{
	size_t errors = diag->n_errors, cap = 0;
	struct auth_db *db;
	const char *p = text, *end = text + len;
	unsigned line = 0;

	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	pthread_mutex_init(&db->lock, NULL);
	if (getrandom(db->key, sizeof(db->key), 0) != (ssize_t)sizeof(db->key)) {
		auth_db_free(db);
		return -EIO;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *colon, *s = p, *e;
		size_t ulen, hlen;

		line++;
		p = nl ? nl + 1 : end;
		e = eol;
		if (e > s && e[-1] == '\r')
			e--;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (s == e || *s == '#')
			continue;
		if (memchr(s, '\0', (size_t)(e - s))) {
			config_diag_add(diag, false, name, line, "line contains a NUL byte");
			continue;
		}
		colon = memchr(s, ':', (size_t)(e - s));
		if (!colon) {
			config_diag_add(diag, false, name, line,
					"expected user:hash (create the file with htpasswd -B)");
			continue;
		}
		ulen = (size_t)(colon - s);
		hlen = (size_t)(e - colon - 1);
		if (ulen == 0 || ulen >= AUTH_USER_MAX) {
			config_diag_add(diag, false, name, line, "user name empty or longer than %d bytes",
					AUTH_USER_MAX - 1);
			continue;
		}
		if (db->n_users == USERS_MAX) {
			config_diag_add(diag, false, name, line, "more than %d users", USERS_MAX);
			break;
		}
		if (db->n_users == cap) {
			struct user *u = realloc(db->users, (cap ? cap * 2 : 8) * sizeof(*u));

			if (!u) {
				auth_db_free(db);
				return -ENOMEM;
			}
			db->users = u;
			cap = cap ? cap * 2 : 8;
		}
		{
			struct user *u = &db->users[db->n_users];

			memcpy(u->name, s, ulen);
			u->name[ulen] = '\0';
			if (hlen != HASH_LEN) {
				config_diag_add(diag, false, name, line,
						"user \"%s\": not a bcrypt hash (create the file with htpasswd -B)",
						u->name);
				continue;
			}
			memcpy(u->hash, colon + 1, HASH_LEN);
			u->hash[HASH_LEN] = '\0';
			if (!is_bcrypt(u->hash)) {
				config_diag_add(diag, false, name, line,
						"user \"%s\": not a bcrypt hash (create the file with htpasswd -B)",
						u->name);
				continue;
			}
			if (cost_of(u->hash) > AUTH_COST_MAX) {
				config_diag_add(diag, false, name, line,
						"user \"%s\": bcrypt cost %u is above the maximum of %d (every check of it, "
						"and of unknown users, would hold a core for seconds); make the hash again "
						"with htpasswd -B -C %d or less",
						u->name, cost_of(u->hash), AUTH_COST_MAX, AUTH_COST_MAX);
				continue;
			}
			for (size_t i = 0; i < db->n_users; i++) {
				if (strcmp(db->users[i].name, u->name) == 0) {
					config_diag_add(diag, false, name, line, "user \"%s\" is listed twice",
							u->name);
					goto next;
				}
			}
			db->n_users++;
		}
next:;
	}
	if (diag->n_errors > errors) {
		auth_db_free(db);
		return -EINVAL;
	}
	if (db->n_users == 0) {
		config_diag_add(diag, false, name, 0, "no users: every request would be refused");
		auth_db_free(db);
		return -EINVAL;
	}
	*ret = db;
	return 0;
}

/* The user whose hash checks a password given for @name: @name's own, or
 * for a name not in the file one chosen by a keyed hash of the name.  An
 * unknown name then costs what a known one costs (the same for the same
 * name, drawn from the file's costs as the names in it are), and no one
 * line, however slow, decides what every unknown name costs. */
static const struct user *checked_by(const struct auth_db *db, const char *name, bool *known)
{
	uint8_t mac[DIGEST_LEN];
	uint64_t pick = 0;

	for (size_t i = 0; i < db->n_users; i++) {
		if (strcmp(db->users[i].name, name) == 0) {
			*known = true;
			return &db->users[i];
		}
	}
	*known = false;
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, db->key, sizeof(db->key), name, strlen(name), mac) == 0)
		memcpy(&pick, mac, sizeof(pick));
	return &db->users[pick % db->n_users];
}

unsigned auth_db_cost_of(const struct auth_db *db, const char *user)
{
	bool known;

	return cost_of(checked_by(db, user, &known)->hash);
}

int auth_db_load(const char *path, struct auth_db **ret, struct config_diag *diag)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	r = read_file(path, FILE_MAX, &buf, &len);
	if (r == -EFBIG)
		config_diag_add(diag, false, path, 0, "basic_auth_file: larger than 1 MiB");
	else if (r < 0)
		config_diag_add(diag, false, path, 0, "basic_auth_file: cannot open: %s", read_file_strerror(r));
	if (r < 0)
		return r;
	r = auth_db_parse(path, buf, len, ret, diag);
	explicit_bzero(buf, len);
	free(buf);
	return r;
}

void auth_db_free(struct auth_db *db)
{
	if (!db)
		return;
	free(db->users);
	pthread_mutex_destroy(&db->lock);
	explicit_bzero(db, sizeof(*db));
	free(db);
}

size_t auth_db_users(const struct auth_db *db)
{
	return db->n_users;
}

int auth_parse_header(const char *value, char *user, size_t ulen, char *pass, size_t plen)
{
	gnutls_datum_t in, out = { NULL, 0 };
	const char *p = value, *b64;
	const unsigned char *colon;
	size_t n, ul, pl;
	int r = -EINVAL;

	if (strncasecmp(p, "Basic", 5) != 0 || (p[5] != ' ' && p[5] != '\t'))
		return -EINVAL;
	p += 5;
	while (*p == ' ' || *p == '\t')
		p++;
	b64 = p;
	n = strlen(b64);
	while (n > 0 && (b64[n - 1] == ' ' || b64[n - 1] == '\t'))
		n--;
	if (n == 0 || n > 4 * ((AUTH_USER_MAX + AUTH_PASSWORD_MAX) / 3 + 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)b64[i]) && b64[i] != '+' && b64[i] != '/' && b64[i] != '=')
			return -EINVAL;
	in = (gnutls_datum_t){ (unsigned char *)(uintptr_t)b64, (unsigned)n };
	if (gnutls_base64_decode2(&in, &out) < 0)
		return -EINVAL;
	colon = memchr(out.data, ':', out.size);
	if (!colon || memchr(out.data, '\0', out.size))
		goto out;
	ul = (size_t)(colon - out.data);
	pl = out.size - ul - 1;
	if (ul == 0 || ul >= ulen || pl >= plen)
		goto out;
	memcpy(user, out.data, ul);
	user[ul] = '\0';
	memcpy(pass, colon + 1, pl);
	pass[pl] = '\0';
	r = 0;
out:
	if (out.data) {
		explicit_bzero(out.data, out.size);
		gnutls_free(out.data);
	}
	return r;
}

/* Compares all of both strings whatever they hold. */
static bool equal_ct(const char *a, const char *b, size_t len)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < len; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

/* bcrypt @password with @setting (a full hash, or only its salt part) and
 * compare with @hash; the comparison covers all of it whatever it holds. */
static bool verify(const char *password, const char *setting, const char *hash)
{
	struct crypt_data *data = calloc(1, sizeof(*data));
	const char *out;
	bool ok;

	if (!data)
		return false;
	out = crypt_rn(password, setting, data, (int)sizeof(*data));
	ok = out && hash && strlen(out) == HASH_LEN && equal_ct(out, hash, HASH_LEN);
	explicit_bzero(data, sizeof(*data));
	free(data);
	return ok;
}

enum auth_result auth_lookup(struct auth_db *db, const char *authorization,
			     struct auth_attempt *a)
{
	char both[AUTH_USER_MAX + AUTH_PASSWORD_MAX + 1];
	uint64_t now = mono_ns();
	bool hit = false;
	size_t n;

	if (!authorization)
		return AUTH_MISSING;
	if (auth_parse_header(authorization, a->user, sizeof(a->user), a->pass, sizeof(a->pass)) < 0)
		return AUTH_MALFORMED;
	n = (size_t)snprintf(both, sizeof(both), "%s:%s", a->user, a->pass);
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, db->key, sizeof(db->key), both, n, a->digest) < 0) {
		explicit_bzero(both, sizeof(both));
		explicit_bzero(a, sizeof(*a));
		return AUTH_DENIED;
	}
	explicit_bzero(both, sizeof(both));
	pthread_mutex_lock(&db->lock);
	for (unsigned i = 0; i < CACHE_SLOTS; i++)
		if (db->cache[i].expires_ns > now &&
		    equal_ct((const char *)db->cache[i].digest, (const char *)a->digest, DIGEST_LEN))
			hit = true;
	pthread_mutex_unlock(&db->lock);
	if (hit) {
		explicit_bzero(a, sizeof(*a));
		return AUTH_OK;
	}
	return AUTH_VERIFY;
}

enum auth_result auth_verify(struct auth_db *db, struct auth_attempt *a)
{
	enum auth_result result = AUTH_DENIED;
	bool known;
	const struct user *by = checked_by(db, a->user, &known);

	/* An unknown name is checked against another user's hash and
	 * compared with nothing: the same work, never a match. */
	if (verify(a->pass, by->hash, known ? by->hash : NULL) && known) {
		result = AUTH_OK;
		pthread_mutex_lock(&db->lock);
		memcpy(db->cache[db->next_slot].digest, a->digest, DIGEST_LEN);
		db->cache[db->next_slot].expires_ns = mono_ns() + CACHE_TTL_NS;
		db->next_slot = (db->next_slot + 1) % CACHE_SLOTS;
		pthread_mutex_unlock(&db->lock);
	}
	explicit_bzero(a, sizeof(*a));
	return result;
}

enum auth_result auth_check(struct auth_db *db, const char *authorization, bool *bcrypt)
{
	struct auth_attempt a;
	enum auth_result r = auth_lookup(db, authorization, &a);

	*bcrypt = r == AUTH_VERIFY;
	if (r == AUTH_VERIFY)
		r = auth_verify(db, &a);
	return r;
}
