/* SPDX-License-Identifier: MIT */
/* tls: PEM loading and validation through GnuTLS. */
#include "tls.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define PEM_MAX (1024 * 1024)

static int read_pem(const char *what, const char *path, char **out, char *err, size_t errlen)
{
	size_t len;
	int r = read_file(path, PEM_MAX, out, &len);

	if (r == -EFBIG)
		str_printf(err, errlen, "%s %s: larger than 1 MiB", what, path);
	else if (r < 0)
		str_printf(err, errlen, "%s %s: cannot open: %s", what, path, read_file_strerror(r));
	return r;
}

static gnutls_datum_t datum(const char *pem)
{
	return (gnutls_datum_t){ (unsigned char *)(uintptr_t)pem, (unsigned)strlen(pem) };
}

/* Parses each file on its own first, so the message names the bad one;
 * then builds the credentials sessions will use. */
static int check(struct tls_material *t, const char *cert_path, const char *key_path,
		 const char *ca_path, char *err, size_t errlen)
{
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_x509_crt_t certs[16];
	unsigned n_certs = 16;
	gnutls_x509_privkey_t key = NULL;
	gnutls_datum_t d;
	int r, ret = -EINVAL;

	d = datum(t->cert);
	r = gnutls_x509_crt_list_import(certs, &n_certs, &d, GNUTLS_X509_FMT_PEM,
					GNUTLS_X509_CRT_LIST_IMPORT_FAIL_IF_EXCEED);
	if (r <= 0) {
		str_printf(err, errlen, "tls_cert %s: not a PEM certificate: %s", cert_path,
			   r < 0 ? gnutls_strerror(r) : "no certificate found");
		return -EINVAL;
	}
	for (unsigned i = 0; i < (unsigned)r; i++)
		gnutls_x509_crt_deinit(certs[i]);
	d = datum(t->key);
	if (gnutls_x509_privkey_init(&key) < 0)
		return -ENOMEM;
	r = gnutls_x509_privkey_import2(key, &d, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN);
	gnutls_x509_privkey_deinit(key);
	if (r < 0) {
		str_printf(err, errlen, "tls_key %s: not an unencrypted PEM private key: %s", key_path,
			   gnutls_strerror(r));
		return -EINVAL;
	}
	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return -ENOMEM;
	{
		gnutls_datum_t c = datum(t->cert), k = datum(t->key);

		r = gnutls_certificate_set_x509_key_mem2(cred, &c, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	}
	if (r < 0) {
		str_printf(err, errlen, "tls_cert %s and tls_key %s do not go together: %s", cert_path,
			   key_path, gnutls_strerror(r));
		goto out;
	}
	if (t->ca) {
		d = datum(t->ca);
		r = gnutls_certificate_set_x509_trust_mem(cred, &d, GNUTLS_X509_FMT_PEM);
		if (r <= 0) {
			str_printf(err, errlen, "tls_client_ca %s: no PEM CA certificate: %s", ca_path,
				   r < 0 ? gnutls_strerror(r) : "none found");
			goto out;
		}
	}
	t->cred = cred;
	return 0;
out:
	gnutls_certificate_free_credentials(cred);
	return ret;
}

int tls_material_load(const char *cert_path, const char *key_path, const char *ca_path,
		      struct tls_material **ret, char *err, size_t errlen)
{
	struct tls_material *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	if ((r = read_pem("tls_cert", cert_path, &t->cert, err, errlen)) < 0 ||
	    (r = read_pem("tls_key", key_path, &t->key, err, errlen)) < 0 ||
	    (ca_path[0] && (r = read_pem("tls_client_ca", ca_path, &t->ca, err, errlen)) < 0) ||
	    (r = check(t, cert_path, key_path, ca_path, err, errlen)) < 0) {
		tls_material_free(t);
		return r;
	}
	*ret = t;
	return 0;
}

void tls_material_free(struct tls_material *tls)
{
	if (!tls)
		return;
	if (tls->key) {
		/* Do not leave the private key in freed memory. */
		explicit_bzero(tls->key, strlen(tls->key));
		free(tls->key);
	}
	if (tls->cred)
		gnutls_certificate_free_credentials(tls->cred);
	free(tls->cert);
	free(tls->ca);
	free(tls);
}
