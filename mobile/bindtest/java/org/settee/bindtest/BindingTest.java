package org.settee.bindtest;

import static org.junit.Assert.*;

import java.util.concurrent.CopyOnWriteArrayList;
import mobile.Logger;
import mobile.Mobile;
import org.junit.Test;

/** Drives package mobile from Java through the generated binding. */
public class BindingTest {
	@Test
	public void versionAndLogger() {
		assertFalse(Mobile.Version.isEmpty());
		CopyOnWriteArrayList<String> lines = new CopyOnWriteArrayList<>();
		Logger l = new Logger() {
			public void log(long level, String message) { lines.add(level + " " + message); }
		};
		Mobile.setLogger(l, Mobile.LevelDebug);
		Mobile.setLogger(null, Mobile.LevelInfo);
	}
}
