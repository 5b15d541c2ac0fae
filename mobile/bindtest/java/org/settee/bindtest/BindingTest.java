package org.settee.bindtest;

import static org.junit.Assert.*;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import mobile.AttachmentReader;
import mobile.AttachmentSource;
import mobile.ChangeListener;
import mobile.QueryListener;
import mobile.ConflictResolver;
import mobile.Database;
import mobile.ListenerToken;
import mobile.Logger;
import mobile.Mobile;
import mobile.Replicator;
import mobile.ReplicatorConfig;
import mobile.ReplicatorListener;
import mobile.ReplicatorStatus;
import mobile.TokenProvider;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Drives package mobile from Java through the generated binding, the way
 * an Android app does. The remote is the pouchdb-server that
 * scripts/mobile-check starts (system property settee.couch).
 */
public class BindingTest {
	static final String COUCH = System.getProperty("settee.couch");
	static final String TMP = System.getProperty("settee.tmp", System.getProperty("java.io.tmpdir"));
	private Database db;

	@Before
	public void open() throws Exception {
		File dir = new File(TMP);
		dir.mkdirs();
		db = Mobile.open(new File(dir, UUID.randomUUID() + ".db").getPath());
	}

	@After
	public void close() throws Exception {
		db.close();
	}

	// --- helpers -------------------------------------------------------

	static String str(String json, String key) {
		Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\":\"([^\"]*)\"").matcher(json);
		return m.find() ? m.group(1) : null;
	}

	static long num(String json, String key) {
		Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\":(-?\\d+)").matcher(json);
		assertTrue(key + " in " + json, m.find());
		return Long.parseLong(m.group(1));
	}

	/** Sends a request to pouchdb-server and returns the body; fails on >= 300. */
	static String http(String method, String path, String body) throws Exception {
		HttpURLConnection c = (HttpURLConnection) new URL(COUCH + path).openConnection();
		c.setRequestMethod(method);
		c.setRequestProperty("Content-Type", "application/json");
		if (body != null) {
			c.setDoOutput(true);
			try (OutputStream o = c.getOutputStream()) {
				o.write(body.getBytes(StandardCharsets.UTF_8));
			}
		}
		int code = c.getResponseCode();
		InputStream in = code >= 400 ? c.getErrorStream() : c.getInputStream();
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		in.transferTo(out);
		String s = out.toString(StandardCharsets.UTF_8);
		assertTrue(method + " " + path + ": " + code + " " + s, code < 300);
		return s;
	}

	static String newRemoteDB() throws Exception {
		assertNotNull("settee.couch is not set", COUCH);
		String name = "db" + UUID.randomUUID().toString().replace("-", "");
		http("PUT", "/" + name, null);
		return name;
	}

	/** Records status callbacks; they arrive on a Go-owned thread. */
	static final class Statuses implements ReplicatorListener {
		final BlockingQueue<ReplicatorStatus> queue = new LinkedBlockingQueue<>();
		final List<String> threads = new CopyOnWriteArrayList<>();
		final List<String> docErrors = new CopyOnWriteArrayList<>();

		@Override public void onStatus(ReplicatorStatus s) {
			threads.add(Thread.currentThread().getName());
			queue.add(s);
		}

		@Override public void onDocumentError(String docID, String rev, String message) {
			docErrors.add(docID + " " + message);
		}

		ReplicatorStatus await(String state) throws InterruptedException {
			List<String> seen = new ArrayList<>();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (System.nanoTime() < deadline) {
				ReplicatorStatus s = queue.poll(1, TimeUnit.SECONDS);
				if (s == null) continue;
				seen.add(s.getState());
				if (s.getState().equals(state)) return s;
			}
			fail("no " + state + " status; saw " + seen);
			return null;
		}
	}

	private Replicator replicator(String remote, String direction, Statuses l) throws Exception {
		ReplicatorConfig cfg = new ReplicatorConfig(COUCH + "/" + remote);
		cfg.setDirection(direction);
		Replicator r = new Replicator(db, cfg);
		r.setListener(l);
		return r;
	}

	// --- tests -----------------------------------------------------------

	@Test
	public void putGetDelete() throws Exception {
		String rev1 = db.put("{\"_id\":\"a\",\"title\":\"hello\"}");
		assertTrue(rev1, rev1.startsWith("1-"));
		String doc = db.get("a");
		assertEquals("a", str(doc, "_id"));
		assertEquals(rev1, str(doc, "_rev"));
		assertEquals("hello", str(doc, "title"));
		String rev2 = db.put("{\"_id\":\"a\",\"_rev\":\"" + rev1 + "\",\"title\":\"bye\"}");
		assertEquals("hello", str(db.getRev("a", rev1), "title"));
		String rev3 = db.delete("a", rev2);
		assertTrue(rev3, rev3.startsWith("3-"));
		assertEquals(1, num(db.info(), "doc_del_count"));
		String all = db.allDocs("{\"include_docs\":true}");
		assertEquals(0, num(all, "total_rows"));
		String changes = db.changes(0, 10);
		assertEquals(3, num(changes, "last_seq"));
	}

	@Test
	public void errorsBecomeExceptions() throws Exception {
		try {
			db.get("missing");
			fail("no exception for a missing document");
		} catch (Exception e) {
			assertTrue(e.getMessage(), e.getMessage().startsWith("not_found"));
		}
		db.put("{\"_id\":\"c\"}");
		try {
			db.put("{\"_id\":\"c\"}");
			fail("no exception for a conflict");
		} catch (Exception e) {
			assertTrue(e.getMessage(), e.getMessage().startsWith("conflict"));
		}
		try {
			db.put("not json");
			fail("no exception for bad JSON");
		} catch (Exception e) {
			assertTrue(e.getMessage(), e.getMessage().startsWith("bad_request"));
		}
		// A Database built with the generated constructor instead of
		// Mobile.open is unusable but must not crash the JVM.
		try {
			new Database().get("x");
			fail("no exception from an unopened Database");
		} catch (Exception e) {
			assertTrue(e.getMessage(), e.getMessage().contains("closed"));
		}
	}

	@Test
	public void changeListenerFires() throws Exception {
		BlockingQueue<String> got = new LinkedBlockingQueue<>();
		ListenerToken token = db.addChangeListener(new ChangeListener() {
			@Override public void onChange(String changeJSON) { got.add(changeJSON); }
		});
		String rev = db.put("{\"_id\":\"watched\"}");
		String change = got.poll(20, TimeUnit.SECONDS);
		assertNotNull("no change callback", change);
		assertEquals("watched", str(change, "id"));
		assertEquals(rev, str(change, "rev"));
		db.removeChangeListener(token);
		db.put("{\"_id\":\"unwatched\"}");
		db.put("{\"_id\":\"unwatched2\"}");
		// Removing is synchronous for new changes: give a stray call the
		// time to show up, then require none.
		assertNull(got.poll(300, TimeUnit.MILLISECONDS));
	}

	@Test
	public void findAndObserve() throws Exception {
		db.put("{\"_id\":\"t1\",\"list\":\"x\",\"pos\":2}");
		db.put("{\"_id\":\"t2\",\"list\":\"x\",\"pos\":1}");
		assertEquals("created", str(db.createIndex("{\"index\":{\"fields\":[\"list\",\"pos\"]},\"ddoc\":\"t\",\"name\":\"by-list\"}"), "result"));
		String found = db.find("{\"selector\":{\"list\":\"x\"},\"sort\":[\"list\",\"pos\"],\"fields\":[\"_id\"]}");
		assertTrue(found, found.startsWith("{\"docs\":[{\"_id\":\"t2\"},{\"_id\":\"t1\"}]"));
		assertEquals(2, num(db.indexes(), "total_rows"));
		BlockingQueue<String> got = new LinkedBlockingQueue<>();
		ListenerToken token = db.observe("{\"selector\":{\"list\":\"x\"}}", new QueryListener() {
			@Override public void onResult(String updateJSON) { got.add(updateJSON); }
			@Override public void onError(String message) { got.add("error " + message); }
		});
		assertNotNull("no initial result", got.poll(20, TimeUnit.SECONDS));
		db.put("{\"_id\":\"t3\",\"list\":\"x\",\"pos\":0}");
		String update = got.poll(20, TimeUnit.SECONDS);
		assertNotNull("no live update", update);
		assertTrue(update, update.contains("\"kind\":\"added\",\"id\":\"t3\""));
		db.stopObserving(token);
		db.deleteIndex("t", "by-list");
	}

	@Test
	public void attachments() throws Exception {
		String rev1 = db.putAttachment("doc", "", "a.txt", "text/plain", "hi".getBytes(StandardCharsets.UTF_8));
		assertEquals("hi", new String(db.getAttachment("doc", "", "a.txt"), StandardCharsets.UTF_8));

		final byte[] big = new byte[200_000];
		for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 31);
		String rev2 = db.putAttachmentFrom("doc", rev1, "big.bin", "application/octet-stream", new AttachmentSource() {
			int off = 0;
			@Override public byte[] read(long n) {
				int k = (int) Math.min(Math.min(n, 4096), big.length - off);
				byte[] b = java.util.Arrays.copyOfRange(big, off, off + k);
				off += k;
				return b; // empty at the end
			}
		});
		AttachmentReader r = db.openAttachment("doc", rev2, "big.bin");
		assertEquals(big.length, r.length());
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		for (byte[] b = r.read(16384); b != null && b.length > 0; b = r.read(16384)) out.write(b);
		r.close();
		assertArrayEquals(big, out.toByteArray());
	}

	@Test
	public void loggerGetsModuleLogs() throws Exception {
		List<String> lines = new CopyOnWriteArrayList<>();
		Mobile.setLogger(new Logger() {
			@Override public void log(long level, String message) { lines.add(level + " " + message); }
		}, Mobile.LevelInfo);
		try {
			Mobile.open(new File(TMP, UUID.randomUUID() + ".db").getPath()).close();
		} finally {
			Mobile.setLogger(null, Mobile.LevelInfo);
		}
		assertTrue(lines.toString(), lines.stream().anyMatch(l -> l.startsWith("0 opened ")));
	}

	@Test
	public void replicationRunsToCompletion() throws Exception {
		String remote = newRemoteDB();
		http("PUT", "/" + remote + "/fromRemote", "{\"v\":1}");
		db.put("{\"_id\":\"fromPhone\",\"v\":1}");
		Statuses l = new Statuses();
		List<String> tokensAsked = new CopyOnWriteArrayList<>();
		ReplicatorConfig cfg = new ReplicatorConfig(COUCH + "/" + remote);
		cfg.setTokens(new TokenProvider() {
			@Override public String token() { tokensAsked.add("t"); return "a-token"; }
		});
		cfg.setHeaders("{\"X-App\":\"bindtest\"}");
		Replicator r = new Replicator(db, cfg);
		r.setListener(l);
		r.start();
		ReplicatorStatus s = l.await("stopped");
		assertEquals("", s.getLastError());
		assertEquals(2, s.getDocsWritten());
		assertEquals(2, r.status().getDocsRead());
		assertEquals(1, num(db.get("fromRemote"), "v"));
		assertEquals("fromPhone", str(http("GET", "/" + remote + "/fromPhone", null), "_id"));
		assertFalse(tokensAsked.isEmpty());
		assertFalse(l.threads.isEmpty());
		assertTrue(l.docErrors.isEmpty());
	}

	@Test
	public void wrongCredentialsGiveErrorState() throws Exception {
		String remote = newRemoteDB();
		ReplicatorConfig bad = new ReplicatorConfig(COUCH + "/" + remote);
		bad.setDirection("sideways");
		try {
			new Replicator(db, bad);
			fail("a bad direction was accepted");
		} catch (Exception e) {
			assertTrue(e.getMessage(), e.getMessage().startsWith("bad_request"));
		}
		ReplicatorConfig cfg = new ReplicatorConfig(COUCH + "/" + remote);
		cfg.setUsername("nobody");
		cfg.setPassword("s3cr3t-pw");
		Statuses l = new Statuses();
		Replicator r = new Replicator(db, cfg);
		r.setListener(l);
		r.start();
		// Refused credentials are a state of their own: the replicator
		// waits for new ones.
		ReplicatorStatus s = l.await("unauthorized");
		assertTrue(s.getLastError(), s.getLastError().contains("unauthorized"));
		r.stop();
		assertFalse("the password leaked into the error", s.getLastError().contains("s3cr3t-pw"));
	}

	/** Makes "doc" conflicted locally: edited on both sides, then pulled. */
	private String makeConflict(String remote) throws Exception {
		http("PUT", "/" + remote + "/doc", "{\"v\":\"base\"}");
		Statuses l = new Statuses();
		replicator(remote, "pull", l).start();
		l.await("stopped");
		String base = str(db.get("doc"), "_rev");
		http("PUT", "/" + remote + "/doc", "{\"_rev\":\"" + base + "\",\"v\":\"remote\"}");
		db.put("{\"_id\":\"doc\",\"_rev\":\"" + base + "\",\"v\":\"phone\"}");
		return base;
	}

	@Test
	public void conflictResolvedByJavaResolver() throws Exception {
		String remote = newRemoteDB();
		makeConflict(remote);
		Statuses l = new Statuses();
		replicator(remote, "pull", l).start();
		l.await("stopped");
		assertEquals("[\"doc\"]", db.conflicts());

		List<String> leavesSeen = new ArrayList<>();
		long n = db.resolveConflicts(new ConflictResolver() {
			@Override public String resolve(String docID, String leavesJSON) {
				leavesSeen.add(leavesJSON);
				return "{\"v\":\"merged in Java\"}";
			}
		});
		assertEquals(1, n);
		assertEquals(1, leavesSeen.size());
		assertTrue(leavesSeen.get(0), leavesSeen.get(0).contains("\"v\":\"remote\"") && leavesSeen.get(0).contains("\"v\":\"phone\""));
		String doc = db.getWithConflicts("doc");
		assertEquals("merged in Java", str(doc, "v"));
		assertFalse(doc, doc.contains("_conflicts"));
		assertEquals("[]", db.conflicts());
	}

	@Test
	public void conflictResolvedAfterPull() throws Exception {
		String remote = newRemoteDB();
		makeConflict(remote);
		Statuses l = new Statuses();
		Replicator r = replicator(remote, "pull", l);
		r.setConflictResolver(new ConflictResolver() {
			@Override public String resolve(String docID, String leavesJSON) throws Exception {
				// Keep the phone's version: return its revision id.
				Matcher m = Pattern.compile("\"_rev\":\"([^\"]*)\",\"v\":\"phone\"").matcher(leavesJSON);
				if (!m.find()) throw new Exception("no phone leaf in " + leavesJSON);
				return m.group(1);
			}
		});
		r.start();
		l.await("stopped");
		String doc = db.getWithConflicts("doc");
		assertEquals("phone", str(doc, "v"));
		assertFalse(doc, doc.contains("_conflicts"));
	}

	@Test
	public void resolverExceptionIsAnError() throws Exception {
		String remote = newRemoteDB();
		makeConflict(remote);
		Statuses l = new Statuses();
		replicator(remote, "pull", l).start();
		l.await("stopped");
		try {
			db.resolveConflicts(new ConflictResolver() {
				@Override public String resolve(String docID, String leavesJSON) throws Exception {
					throw new Exception("app says no");
				}
			});
			fail("no exception");
		} catch (Exception e) {
			assertTrue(e.getMessage(), e.getMessage().contains("app says no"));
		}
		assertEquals("[\"doc\"]", db.conflicts());
	}

	@Test
	public void continuousPausesWhenOffline() throws Exception {
		String remote = newRemoteDB();
		BlockingQueue<String> changes = new LinkedBlockingQueue<>();
		db.addChangeListener(new ChangeListener() {
			@Override public void onChange(String c) { changes.add(c); }
		});
		ReplicatorConfig cfg = new ReplicatorConfig(COUCH + "/" + remote);
		cfg.setDirection("pull");
		cfg.setContinuous(true);
		Statuses l = new Statuses();
		Replicator r = new Replicator(db, cfg);
		r.setListener(l);
		r.start();
		l.await("idle");
		r.setNetworkAvailable(false);
		l.await("offline");
		http("PUT", "/" + remote + "/whileOffline", "{}");
		assertNull(changes.poll(300, TimeUnit.MILLISECONDS));
		r.setNetworkAvailable(true);
		String c = changes.poll(30, TimeUnit.SECONDS);
		assertNotNull("nothing replicated after coming back online", c);
		assertEquals("whileOffline", str(c, "id"));
		r.stop();
		assertEquals("stopped", r.status().getState());
	}
}
