package org.settee.bindtest;

import static org.junit.Assert.*;
import static org.settee.bindtest.BindingTest.COUCH;
import static org.settee.bindtest.BindingTest.TMP;
import static org.settee.bindtest.BindingTest.http;
import static org.settee.bindtest.BindingTest.newRemoteDB;
import static org.settee.bindtest.BindingTest.str;

import java.io.File;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import kotlin.Unit;
import mobile.Database;
import mobile.ListenerToken;
import mobile.Mobile;
import mobile.Replicator;
import org.settee.readme.Readme;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Runs the Kotlin examples of mobile/README.md, which scripts/mobile-check
 * extracts and compiles into org.settee.readme.Readme.
 */
public class ReadmeTest {
	private final Executor mainThread = Runnable::run;
	private File dir;
	private Database db;

	@Before
	public void open() throws Exception {
		dir = new File(TMP, UUID.randomUUID().toString());
		dir.mkdirs();
		db = Readme.openTodos(dir);
	}

	@After
	public void close() throws Exception {
		db.close();
	}

	@Test
	public void documentsAndBatches() throws Exception {
		String doc = Readme.firstTodo(db);
		assertTrue(doc, doc.contains("\"done\":true"));
		String res = Readme.importTodos(db, Arrays.asList("a", "b"));
		assertEquals(res, 2, res.split("\"ok\":true", -1).length - 1);

		String rev = db.put("{\"_id\":\"todo:2\",\"list\":\"home\"}");
		Readme.moveTodo(db, "todo:2", rev, "work");
		assertEquals("work", str(db.get("todo:2"), "list"));
		// A stale rev: the batch's first put throws, nothing is written.
		try {
			Readme.moveTodo(db, "todo:2", rev, "garden");
			fail("no conflict");
		} catch (Exception e) {
			assertEquals(Mobile.CodeConflict, Mobile.errorCode(e));
		}
		assertEquals("work", str(db.get("todo:2"), "list"));

		assertNull(Readme.todoOrNull(db, "missing"));
		assertNotNull(Readme.todoOrNull(db, "todo:2"));
	}

	@Test
	public void listeners() throws Exception {
		BlockingQueue<String> one = new LinkedBlockingQueue<>(), all = new LinkedBlockingQueue<>(), live = new LinkedBlockingQueue<>();
		ListenerToken t1 = Readme.watchTodo(db, "todo:1", mainThread, c -> { one.add(c); return Unit.INSTANCE; });
		ListenerToken t2 = Readme.watchAll(db, () -> { all.add("changed"); return Unit.INSTANCE; });
		ListenerToken t3 = Readme.watchOpenTodos(db, mainThread, u -> { live.add(u); return Unit.INSTANCE; });
		assertNotNull("no initial result", live.poll(20, TimeUnit.SECONDS));
		db.put("{\"_id\":\"other\"}");
		db.put("{\"_id\":\"todo:9\",\"title\":\"Call Bob\",\"done\":false}"); // joins the live result
		Readme.firstTodo(db);
		String c = one.poll(20, TimeUnit.SECONDS);
		assertNotNull("the document listener heard nothing", c);
		assertEquals("todo:1", str(c, "id"));
		assertNotNull(all.poll(20, TimeUnit.SECONDS));
		assertNotNull("no live update", live.poll(20, TimeUnit.SECONDS));
		t1.remove();
		t2.remove();
		t3.remove();
	}

	@Test
	public void wipe() throws Exception {
		db.close();
		Readme.wipeLocalData(dir);
		assertFalse(new File(dir, "todos.db").exists());
		Readme.wipeLocalData(dir); // nothing there: no-op
		db = Readme.openTodos(dir);
	}

	@Test
	public void sync() throws Exception {
		Readme.routeLogs();
		try {
			String remote = newRemoteDB();
			Readme.firstTodo(db);
			BlockingQueue<long[]> progress = new LinkedBlockingQueue<>();
			BlockingQueue<String> synced = new LinkedBlockingQueue<>();
			Replicator r = Readme.startSync(db, COUCH + "/" + remote, "", "", mainThread,
				(c, t) -> { progress.add(new long[] {c, t}); return Unit.INSTANCE; },
				js -> { synced.add(js); return Unit.INSTANCE; });
			String pushed = synced.poll(60, TimeUnit.SECONDS);
			assertNotNull("no document event", pushed);
			assertTrue(pushed, pushed.startsWith("{\"direction\":\"push\",\"documents\":[{\"id\":\"todo:1\",\"rev\":\"2-"));
			assertEquals("todo:1", str(http("GET", "/" + remote + "/todo:1", null), "_id"));
			// Progress reaches completion, never going back.
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			long[] last = null;
			while (System.nanoTime() < deadline && (last == null || last[0] != last[1] || last[1] < 1)) {
				long[] p = progress.poll(1, TimeUnit.SECONDS);
				if (p == null) continue;
				if (last != null) {
					assertTrue("progress went back", p[0] >= last[0] && p[1] >= last[1]);
				}
				assertTrue("completed > total", p[0] <= p[1]);
				last = p;
			}
			assertNotNull("no progress", last);
			assertEquals(last[1], last[0]);
			Readme.networkChanged(r, false);
			Readme.networkChanged(r, true);
			r.stop();
		} finally {
			Mobile.setLogger(null, Mobile.LevelInfo);
		}
	}

	@Test
	public void encryptedNotes() throws Exception {
		// On the JVM a generated AES key stands in for the Android Keystore's.
		javax.crypto.KeyGenerator gen = javax.crypto.KeyGenerator.getInstance("AES");
		gen.init(256);
		javax.crypto.SecretKey keystoreKey = gen.generateKey();
		Database notes = Readme.openNotes(dir, keystoreKey);
		notes.put("{\"_id\":\"n1\",\"text\":\"secret\"}");
		notes.close();
		assertTrue(new File(dir, "notes.key").exists());
		notes = Readme.openNotes(dir, keystoreKey); // the wrapped key, unwrapped
		assertEquals("secret", str(notes.get("n1"), "text"));
		notes.close();
	}
}
