// A stand-in for Android's android.content.Context, which the generated
// go.Seq class names in a signature. On a phone the real one is used.
package android.content;

public class Context {}
