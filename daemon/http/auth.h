/* SPDX-License-Identifier: MIT */
/* auth: HTTP basic authentication against a file of bcrypt hashes as
 * `htpasswd -B` writes them.
 *
 * The file and the Authorization header are parsed by pure functions.
 * Checking a request has a fast half and a slow half.  auth_lookup()
 * parses the header and finds credentials that verified recently (kept as
 * an HMAC under a per-process random key, for a few minutes), so that a
 * scrape every second does not pay bcrypt each time.  auth_verify() runs
 * bcrypt (crypt(3), libxcrypt) and compares in constant time; it is meant
 * for a worker thread.  An unknown user is checked against a dummy hash at
 * the highest cost in the file, so it takes as long as a known one and
 * user names cannot be told apart by timing.  Thread-safe. */
#ifndef TOPDOWND_AUTH_H
#define TOPDOWND_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define AUTH_REALM "topdownd"
#define AUTH_USER_MAX 256
#define AUTH_PASSWORD_MAX 256
/* The highest bcrypt cost a basic_auth_file may hold: about a second of a
 * core per check (1.3 s at 14 on the test machines; each step doubles
 * it), so that a stop waits at most that for a check under way (the
 * unit's TimeoutStopSec is 5 s) and no line makes every check slow.
 * Apache's htpasswd goes to 17; exporter-toolkit's documentation uses 10. */
#define AUTH_COST_MAX 14

struct auth_db;

/* Parses the file's text; problems go to @diag as NAME:LINE: message.
 * Returns 0 or -EINVAL (see @diag) or -ENOMEM. */
int auth_db_parse(const char *name, const char *text, size_t len, struct auth_db **ret,
		  struct config_diag *diag);
int auth_db_load(const char *path, struct auth_db **ret, struct config_diag *diag);
void auth_db_free(struct auth_db *db);
size_t auth_db_users(const struct auth_db *db);

/* Splits "Basic dXNlcjpwYXNz" into user and password.  -EINVAL when it is
 * not a well-formed Basic credential. */
int auth_parse_header(const char *value, char *user, size_t ulen, char *pass, size_t plen);

enum auth_result {
	AUTH_OK,
	AUTH_MISSING,   /* no Authorization header */
	AUTH_MALFORMED, /* not Basic, bad base64, no colon... */
	AUTH_DENIED,    /* unknown user or wrong password */
	AUTH_VERIFY,    /* not known yet: auth_verify() decides */
	AUTH_UNAVAILABLE, /* not checked: the server is stopping (503) */
};

/* What auth_verify() needs; wiped by it. */
struct auth_attempt {
	char user[AUTH_USER_MAX];
	char pass[AUTH_PASSWORD_MAX];
	unsigned char digest[32];
};

/* Parses an Authorization header value (NULL if absent) and looks the
 * credentials up among those that verified recently: AUTH_OK, AUTH_MISSING,
 * AUTH_MALFORMED, or AUTH_VERIFY with @attempt filled in.  Fast. */
enum auth_result auth_lookup(struct auth_db *db, const char *authorization,
			     struct auth_attempt *attempt);
/* bcrypt: AUTH_OK (and remembered) or AUTH_DENIED.  Slow by design. */
enum auth_result auth_verify(struct auth_db *db, struct auth_attempt *attempt);
/* Both halves in one call; *@bcrypt says whether the slow one ran. */
enum auth_result auth_check(struct auth_db *db, const char *authorization, bool *bcrypt);
/* The bcrypt cost a check of @user pays: its own, or for a name not in
 * the file the cost of a user chosen by a keyed hash of the name. */
unsigned auth_db_cost_of(const struct auth_db *db, const char *user);

#endif
