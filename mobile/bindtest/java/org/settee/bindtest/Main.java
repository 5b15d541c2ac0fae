package org.settee.bindtest;

import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;

/**
 * Runs the binding tests with JUnit 4 and prints "N passed, N failed" on a
 * line of its own, which scripts/mobile-check looks for.
 */
public final class Main {
	public static void main(String[] args) {
		JUnitCore core = new JUnitCore();
		Result r = core.run(BindingTest.class, MobileApiTest.class, ReadmeTest.class);
		for (Failure f : r.getFailures()) {
			System.out.println("FAIL " + f.getTestHeader() + ": " + f.getMessage());
			System.out.println(f.getTrace());
		}
		int failed = r.getFailureCount();
		int passed = r.getRunCount() - failed;
		System.out.println(passed + " passed, " + failed + " failed");
		System.exit(failed == 0 && passed > 0 ? 0 : 1);
	}
}
