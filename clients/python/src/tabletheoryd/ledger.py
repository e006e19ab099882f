# SPDX-License-Identifier: Apache-2.0
"""The job ledger (docs/ledger.md): jobs, records, leases, idempotency, and a worker
helper that holds a lease while it works."""
import os
import socket
import threading
import uuid
from urllib.parse import quote

from . import errors


def _q(s):
    return quote(str(s), safe="")


def default_owner():
    """host:pid:random -- unique per process, as leases need."""
    return "%s:%d:%s" % (socket.gethostname(), os.getpid(), uuid.uuid4().hex[:8])


class Outcome:
    """The answer of begin_request: outcome is "created" (you own the effect),
    "already_in_progress" or "already_completed" (then result/error are the first
    completion's)."""

    def __init__(self, doc):
        self.outcome = doc.get("outcome")
        self.result = doc.get("result")
        self.error = doc.get("error")

    @property
    def created(self):
        return self.outcome == "created"

    def __repr__(self):
        return "Outcome(%r)" % (self.outcome,)


class Jobs:
    """client.jobs: the ledger endpoints."""

    def __init__(self, client):
        self.client = client

    def _r(self, method, path, body=None, **kw):
        return self.client.request(method, "/v1/jobs" + path, body, **kw)[2]

    def ensure_table(self):
        return self.client.request("PUT", "/v1/jobs/table", idempotent=True)[0] == 201

    def create(self, tenant_id, job_id=None, status=None, ttl_seconds=None, request_id=None):
        """A new job (version 1); AlreadyExists when job_id is taken."""
        body = {"tenant_id": tenant_id}
        for k, v in (("job_id", job_id), ("status", status), ("ttl_seconds", ttl_seconds)):
            if v is not None:
                body[k] = v
        return self._r("POST", "", body, request_id=request_id)

    def get(self, job_id, request_id=None):
        """The job; JobNotFound when absent."""
        return self._r("GET", "/" + _q(job_id), idempotent=True, request_id=request_id)

    def list(self, status=None, tenant_id=None, order=None, page_size=None, request_id=None):
        """Iterates over the jobs with this status and/or tenant, following cursors."""
        return self._pages("", "jobs", {"status": status, "tenant_id": tenant_id,
                                        "order": order, "limit": page_size}, request_id)

    def _pages(self, path, member, query, request_id):
        cursor = None
        while True:
            page = self.client.request("GET", "/v1/jobs" + path, query=dict(query, cursor=cursor),
                                       idempotent=True, request_id=request_id)[2]
            yield from page[member]
            cursor = page.get("cursor")
            if not cursor:
                return

    def transition(self, job_id, expected_version, from_, to, request_id=None):
        """Moves the job from `from_` (None: from any status) to `to` when its version is
        expected_version; VersionConflict, InvalidTransition. Returns the job."""
        body = {"expected_version": expected_version, "to": to}
        if from_ is not None:
            body["from"] = from_
        return self._r("POST", "/%s/transition" % _q(job_id), body, request_id=request_id)

    def put_record(self, job_id, record_id, status, error=None, ttl_seconds=None,
                   request_id=None):
        """Writes a record's status (and sanitized error envelope); an upsert."""
        body = {"status": status}
        if error is not None:
            body["error"] = error
        if ttl_seconds is not None:
            body["ttl_seconds"] = ttl_seconds
        return self._r("PUT", "/%s/records/%s" % (_q(job_id), _q(record_id)), body,
                       idempotent=True, request_id=request_id)

    def get_record(self, job_id, record_id, request_id=None):
        return self._r("GET", "/%s/records/%s" % (_q(job_id), _q(record_id)), idempotent=True,
                       request_id=request_id)

    def records(self, job_id, status=None, order=None, page_size=None, request_id=None):
        """Iterates over a job's records in record_id order, following cursors."""
        return self._pages("/%s/records" % _q(job_id), "records",
                           {"status": status, "order": order, "limit": page_size}, request_id)

    # -- leases --------------------------------------------------------------------------

    def acquire_lease(self, job_id, owner, duration_seconds=60, request_id=None):
        """{"job_id","owner","expires_at"}; LeaseHeld when another owner holds it.
        Idempotent for one owner (acquiring again extends it), so it is retried."""
        return self._r("POST", "/%s/lease" % _q(job_id),
                       {"owner": owner, "duration_seconds": duration_seconds},
                       idempotent=True, request_id=request_id)

    def refresh_lease(self, job_id, owner, duration_seconds=60, request_id=None):
        """Extends our lease; LeaseNotOwned when it expired or is another's."""
        return self._r("POST", "/%s/lease/refresh" % _q(job_id),
                       {"owner": owner, "duration_seconds": duration_seconds},
                       idempotent=True, request_id=request_id)

    def release_lease(self, job_id, owner, request_id=None):
        """Releases our lease (fine when already gone); LeaseNotOwned if another's."""
        self.client.request("DELETE", "/v1/jobs/%s/lease" % _q(job_id), query={"owner": owner},
                            idempotent=True, request_id=request_id)

    def lease(self, job_id, owner=None, duration_seconds=60, refresh_every=None):
        """A context manager holding the lease: acquires it (LeaseHeld if taken),
        refreshes it in a background thread every refresh_every seconds (default a third
        of the duration), releases it on exit:

            with client.jobs.lease("import-42") as lease:
                for rec in work:
                    lease.check()      # raises LeaseNotOwned once the lease was lost
                    ...
        """
        return Lease(self, job_id, owner or default_owner(), duration_seconds, refresh_every)

    def work(self, job_id, fn, owner=None, duration_seconds=60, refresh_every=None):
        """Runs fn(lease) while holding the job's lease; returns what fn returns."""
        with self.lease(job_id, owner, duration_seconds, refresh_every) as lease:
            return fn(lease)

    # -- idempotency ---------------------------------------------------------------------

    def begin_request(self, job_id, key, ttl_seconds=None, request_id=None):
        """Claims an idempotency key: Outcome.created means do the effect, then
        complete_request. Not retried after an ambiguous failure (a second try would
        answer already_in_progress for our own claim)."""
        body = {} if ttl_seconds is None else {"ttl_seconds": ttl_seconds}
        return Outcome(self._r("POST", "/%s/requests/%s" % (_q(job_id), _q(key)), body,
                               request_id=request_id))

    def complete_request(self, job_id, key, result=None, error=None, request_id=None):
        """Stores the result (the first completion wins); returns the Outcome."""
        body = {}
        if result is not None:
            body["result"] = result
        if error is not None:
            body["error"] = error
        return Outcome(self._r("POST", "/%s/requests/%s/complete" % (_q(job_id), _q(key)),
                               body, request_id=request_id))


class Lease:
    """A held lease (see Jobs.lease). lost is set once a refresh was refused."""

    def __init__(self, jobs, job_id, owner, duration_seconds, refresh_every):
        self.jobs = jobs
        self.job_id = job_id
        self.owner = owner
        self.duration_seconds = duration_seconds
        self.refresh_every = refresh_every or max(duration_seconds / 3.0, 0.05)
        self.expires_at = None
        self.lost = threading.Event()
        self.error = None
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        r = self.jobs.acquire_lease(self.job_id, self.owner, self.duration_seconds)
        self.expires_at = r.get("expires_at")
        self._thread = threading.Thread(target=self._refresher, daemon=True,
                                        name="tabletheoryd-lease-%s" % self.job_id)
        self._thread.start()
        return self

    def _refresher(self):
        while not self._stop.wait(self.refresh_every):
            try:
                r = self.jobs.refresh_lease(self.job_id, self.owner, self.duration_seconds)
                self.expires_at = r.get("expires_at")
            except errors.LeaseNotOwned as e:
                self.error = e
                self.lost.set()
                return
            except errors.TableTheoryError as e:
                # A transient failure: keep trying until the lease really is lost.
                self.error = e

    def refresh(self):
        """Refreshes now (also done in the background)."""
        r = self.jobs.refresh_lease(self.job_id, self.owner, self.duration_seconds)
        self.expires_at = r.get("expires_at")
        return r

    def check(self):
        """Raises LeaseNotOwned when the lease was lost: stop working on the job."""
        if self.lost.is_set():
            raise self.error

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if not self.lost.is_set():
            try:
                self.jobs.release_lease(self.job_id, self.owner)
            except errors.LeaseNotOwned:
                pass
        return False
