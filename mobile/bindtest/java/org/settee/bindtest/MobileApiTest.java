package org.settee.bindtest;

import static org.junit.Assert.*;
import static org.settee.bindtest.BindingTest.TMP;
import static org.settee.bindtest.BindingTest.num;
import static org.settee.bindtest.BindingTest.str;

import java.io.File;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import mobile.Batch;
import mobile.BatchFunc;
import mobile.ChangeListener;
import mobile.Database;
import mobile.Databases;
import mobile.ListenerToken;
import mobile.Mobile;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The calls an app makes beyond put/get: batches, document listeners,
 * error codes, deleting stores, through the generated binding.
 */
public class MobileApiTest {
	private final Databases dbs = new Databases();
	private String path;
	private Database db;

	@Before
	public void open() throws Exception {
		File dir = new File(TMP);
		dir.mkdirs();
		path = new File(dir, UUID.randomUUID() + ".db").getPath();
		db = dbs.open(path);
	}

	@After
	public void close() throws Exception {
		db.close();
	}

	@Test
	public void saveAllAnswersPerDocument() throws Exception {
		db.put("{\"_id\":\"taken\"}");
		String res = db.saveAll("[{\"_id\":\"a\"},{\"_id\":\"taken\"}]");
		assertTrue(res, res.startsWith("[{\"id\":\"a\",\"rev\":\"1-"));
		assertTrue(res, res.contains("{\"id\":\"taken\",\"error\":\"conflict\",\"reason\":\"Document update conflict.\"}"));
	}

	static final class AppException extends Exception {
		AppException(String m) { super(m); }
	}

	@Test
	public void inBatchCommitsOrRollsBack() throws Exception {
		long seq = num(db.info(), "update_seq");
		db.inBatch(new BatchFunc() {
			@Override public void run(Batch b) throws Exception {
				String rev = b.put("{\"_id\":\"a\",\"n\":1}");
				b.put("{\"_id\":\"a\",\"_rev\":\"" + rev + "\",\"n\":2}");
				// The Database's own put, on the batch's thread, joins it
				// instead of waiting for it for ever.
				db.put("{\"_id\":\"b\"}");
			}
		});
		// Three writes (a twice, b), one commit.
		assertEquals(seq + 3, num(db.info(), "update_seq"));
		assertEquals(2, num(db.get("a"), "n"));

		// A Java exception thrown in the batch rolls it all back and comes
		// out of inBatch as it was thrown.
		AppException thrown = new AppException("the app changed its mind");
		try {
			db.inBatch(new BatchFunc() {
				@Override public void run(Batch b) throws Exception {
					b.put("{\"_id\":\"c\"}");
					db.put("{\"_id\":\"d\"}");
					throw thrown;
				}
			});
			fail("no exception");
		} catch (AppException e) {
			assertSame(thrown, e);
		}
		// A RuntimeException too.
		try {
			db.inBatch(new BatchFunc() {
				@Override public void run(Batch b) throws Exception {
					b.put("{\"_id\":\"c\"}");
					throw new IllegalStateException("bug");
				}
			});
			fail("no exception");
		} catch (Exception e) {
			assertTrue(e.toString(), e instanceof IllegalStateException);
		}
		assertEquals(seq + 3, num(db.info(), "update_seq"));
		for (String id : new String[] {"c", "d"}) {
			try {
				db.get(id);
				fail(id + " was written by a rolled back batch");
			} catch (Exception e) {
				assertEquals(Mobile.CodeNotFound, Mobile.errorCode(e));
			}
		}
	}

	@Test
	public void errorCodes() throws Exception {
		db.put("{\"_id\":\"a\"}");
		try {
			db.put("{\"_id\":\"a\"}");
			fail("no conflict");
		} catch (Exception e) {
			assertEquals(Mobile.CodeConflict, Mobile.errorCode(e));
			assertTrue(e.getMessage(), e.getMessage().startsWith(Mobile.CodeConflict + ": "));
		}
		try {
			db.get("missing");
			fail("no not_found");
		} catch (Exception e) {
			assertEquals("not_found", Mobile.errorCode(e));
		}
		try {
			db.saveAll("{\"nope\":1}");
			fail("no bad_request");
		} catch (Exception e) {
			assertEquals(Mobile.CodeBadRequest, Mobile.errorCode(e));
		}
		try {
			dbs.delete(path);
			fail("an open database was deleted");
		} catch (Exception e) {
			assertEquals(Mobile.CodeDatabaseOpen, Mobile.errorCode(e));
		}
		// Exceptions that never went through Go: read from the message.
		assertEquals(Mobile.CodeConflict, Mobile.errorCode(new Exception("conflict: Document update conflict.")));
		assertEquals(Mobile.CodeUnknown, Mobile.errorCode(new Exception("something else")));
		assertEquals(Mobile.CodeUnknown, Mobile.errorCode(new Exception()));
	}

	@Test
	public void deleteDatabaseAndExists() throws Exception {
		assertTrue(dbs.exists(path));
		db.put("{\"_id\":\"a\"}");
		db.close();
		Mobile.deleteDatabase(path);
		assertFalse(Mobile.exists(path));
		assertFalse(new File(path).exists());
		assertFalse(new File(path + "-wal").exists());
		try {
			dbs.delete(path);
			fail("a missing database was deleted");
		} catch (Exception e) {
			assertEquals(Mobile.CodeNotFound, Mobile.errorCode(e));
		}
		db = dbs.open(path); // for close()
	}

	@Test
	public void documentListenerTokens() throws Exception {
		BlockingQueue<String> a = new LinkedBlockingQueue<>();
		ListenerToken token = db.addDocumentChangeListener("a", new ChangeListener() {
			@Override public void onChange(String changeJSON) { a.add(changeJSON); }
		});
		db.put("{\"_id\":\"b\"}");
		String rev = db.put("{\"_id\":\"a\"}");
		String change = a.poll(20, TimeUnit.SECONDS);
		assertNotNull("no change of a", change);
		assertEquals("a", str(change, "id"));
		assertNull(a.poll(300, TimeUnit.MILLISECONDS));
		token.remove();
		token.remove();
		db.delete("a", rev);
		assertNull(a.poll(300, TimeUnit.MILLISECONDS));
	}

	@Test
	public void encryptedStore() throws Exception {
		byte[] key = new byte[32];
		new java.security.SecureRandom().nextBytes(key);
		String enc = new File(TMP, UUID.randomUUID() + "-enc.db").getPath();
		Database e = dbs.openEncrypted(enc, key, false);
		e.put("{\"_id\":\"a\",\"note\":\"JAVAMARKER\"}");
		e.close();
		byte[] file = java.nio.file.Files.readAllBytes(new File(enc).toPath());
		assertFalse(new String(file, java.nio.charset.StandardCharsets.ISO_8859_1).contains("JAVAMARKER"));
		e = dbs.openEncrypted(enc, key, false);
		assertEquals("JAVAMARKER", str(e.get("a"), "note"));
		e.close();
		byte[] wrong = key.clone();
		wrong[0] ^= 1;
		try {
			dbs.openEncrypted(enc, wrong, false);
			fail("a wrong key opened the store");
		} catch (Exception ex) {
			assertEquals(Mobile.CodeWrongKey, Mobile.errorCode(ex));
			assertEquals("unauthorized", Mobile.errorClass(ex));
		}
		try {
			dbs.open(enc);
			fail("no key opened the store");
		} catch (Exception ex) {
			assertEquals(Mobile.CodeWrongKey, Mobile.errorCode(ex));
		}
	}
}
