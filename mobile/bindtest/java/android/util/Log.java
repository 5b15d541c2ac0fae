// A stand-in for Android's android.util.Log, which the Kotlin examples of
// mobile/README.md call: they compile and run on the host JVM with it.
package android.util;

public final class Log {
	public static final int INFO = 4;
	public static final int WARN = 5;
	public static final int ERROR = 6;

	private Log() {}

	public static int println(int priority, String tag, String msg) {
		System.out.println((priority >= ERROR ? "E/" : priority >= WARN ? "W/" : "I/") + tag + ": " + msg);
		return 0;
	}

	public static int i(String tag, String msg) { return println(INFO, tag, msg); }

	public static int w(String tag, String msg) { return println(WARN, tag, msg); }

	public static int e(String tag, String msg) { return println(ERROR, tag, msg); }
}
