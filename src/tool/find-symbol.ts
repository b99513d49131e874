import { basename, extname } from "node:path";

// Symbol mode of `find`: where is NAME defined? ripgrep lists the lines of supported files that
// contain NAME as a whole word (a literal search, as fast as a content search), and per-language
// line patterns decide which of them define it. A pattern may carry an `unless` that drops a
// look-alike, such as `return foo(x);` looking like a C function whose return type is `return`.
// (One ripgrep search for the union of all patterns was 10-20 times slower: no literal to start from.)

/** One-line definitions only: a definition split over lines is found by the line holding its name. */
type Pattern = { re: string; unless?: RegExp };
type Language = { name: string; extensions: readonly string[]; patterns(n: string): Pattern[] };

/** Identifier-like: what a definition can be named in the supported languages (Ruby adds a trailing ? or !). */
const NAME = /^[A-Za-z_$][A-Za-z0-9_$]*[?!]?$/;
const MAX_NAME = 200;
/**
 * The JavaScript check looks at most this much of a line. Its patterns are at worst about quadratic
 * in the line length, so a hostile file of long candidate lines cannot stall the event loop.
 */
const CHECKED_CHARS = 600;

/** After the name: anything that cannot continue an identifier. */
const END = "(?:[^A-Za-z0-9_$]|$)";

/** Lines whose first word is a statement keyword are uses, whatever shape follows (`return foo(x);`). */
const STATEMENT = /^\s*(?:return|new|throw|else|case|goto|delete|await|yield|assert|package|import|using|sizeof|typeof|if|while|for|switch|do|co_return|co_yield|echo|print|not|and|or)\b/;
/** A call passing a function expression (`foo(function () {`) is not a method definition. */
const CALL_WITH_FUNCTION = /\(\s*(?:async\s+)?function\b/;

const TS_MODIFIERS = "(?:(?:export|default|declare|abstract|async|public|private|protected|static|readonly|override|accessor|get|set)\\s+)*";
const JVM_ANNOTATIONS = "(?:@[A-Za-z_][\\w.]*(?:\\([^)]*\\))?\\s+)*";
const JAVA_MODIFIERS = "(?:(?:public|private|protected|static|final|abstract|sealed|non-sealed|strictfp|synchronized|native|default|transient|volatile)\\s+)*";
const KOTLIN_MODIFIERS =
  "(?:(?:public|private|protected|internal|open|abstract|final|sealed|data|enum|annotation|inner|value|inline|override|suspend|tailrec|operator|infix|external|const|lateinit|companion|expect|actual|fun)\\s+)*";
const CSHARP_ATTRIBUTES = "(?:\\[[^\\]]*\\]\\s*)*";
const CSHARP_MODIFIERS = "(?:(?:public|private|protected|internal|static|readonly|sealed|abstract|virtual|override|partial|async|extern|unsafe|new|const|volatile|file|required)\\s+)*";
/**
 * Type arguments, nested up to two levels: `<K, List<V>>`. The classes exclude the brackets, so the
 * JavaScript check cannot backtrack through them in many ways (patterns stay about quadratic).
 */
const ARGS = "<[^;()=<>]*(?:<[^;()=<>]*>[^;()=<>]*)*>";
/** A declared type in Java/C#: `int`, `List<Map<K, V>>`, `string?`, `byte[]`, `Outer.Inner`. */
const TYPED = `[A-Za-z_][\\w.]*(?:${ARGS})?\\??(?:\\[,*\\])*\\??`;
const RUST_VISIBILITY = "(?:pub(?:\\s*\\([^)]*\\))?\\s+)?";
const SWIFT_MODIFIERS =
  "(?:(?:@\\w+(?:\\([^)]*\\))?|public|private|fileprivate|internal|open|final|static|class|override|mutating|nonmutating|lazy|weak|unowned|convenience|required|dynamic|indirect|nonisolated|distributed)\\s+)*";
/** C/C++ declaration specifiers and types before a declarator: `static const char *`, `std::vector<int> &`. */
const C_TYPE_TOKENS = `(?:[\\w:~\\[\\]]+(?:${ARGS})?[\\s*&]+)+`;
const CPP_TEMPLATE = "(?:template\\s*<[^;{}]*>\\s*)?";

const typed = (re: string): Pattern => ({ re, unless: STATEMENT });

const LANGUAGES: readonly Language[] = [
  {
    name: "TypeScript/JavaScript",
    extensions: ["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
    patterns: (n) => [
      { re: `^\\s*${TS_MODIFIERS}function\\s*\\*?\\s*${n}\\s*[<(]` },
      { re: `^\\s*${TS_MODIFIERS}(?:const\\s+)?(?:class|interface|type|enum|namespace|module)\\s+${n}${END}` },
      { re: `^\\s*${TS_MODIFIERS}(?:const|let|var)\\s+${n}\\s*[=:;,]` },
      // Methods (also object-literal shorthand): the line ends with the body's brace.
      { re: `^\\s*${TS_MODIFIERS}\\*?${n}\\s*(?:${ARGS})?\\s*\\(.*\\)\\s*(?::\\s*[^=;{]+)?\\{\\s*$`, unless: CALL_WITH_FUNCTION },
      // Signatures in interfaces, abstract classes and overloads: a return type annotation, no body.
      { re: `^\\s*${TS_MODIFIERS}${n}\\??\\s*(?:${ARGS})?\\(.*\\)\\s*:\\s*[^=]+$` },
      // Function-valued class fields and object members.
      { re: `^\\s*${TS_MODIFIERS}${n}\\s*(?::\\s*[^=]+)?=\\s*(?:async\\s+)?(?:function${END}|\\(.*\\)\\s*(?::\\s*[^=]+)?=>|[A-Za-z_$][\\w$]*\\s*=>)` },
      { re: `^\\s*${n}\\s*:\\s*(?:async\\s+)?(?:function${END}|\\(.*\\)\\s*=>|[A-Za-z_$][\\w$]*\\s*=>)` },
      { re: `^\\s*(?:module\\.)?exports\\.${n}\\s*=[^=]` },
    ],
  },
  {
    name: "Python",
    extensions: ["py", "pyi"],
    patterns: (n) => [
      { re: `^\\s*(?:async\\s+)?def\\s+${n}\\s*[(\\[]` },
      { re: `^\\s*class\\s+${n}\\s*[(:\\[]` },
      { re: `^\\s*type\\s+${n}\\s*[=\\[]` },
      // Module-level names (constants, aliases): assignments at column 0.
      { re: `^${n}\\s*(?::[^=]*)?=[^=]` },
    ],
  },
  {
    name: "Go",
    extensions: ["go"],
    patterns: (n) => [
      { re: `^func\\s+(?:\\([^)]*\\)\\s*)?${n}\\s*[(\\[]` },
      { re: `^\\s*(?:type|const|var)\\s+${n}${END}` },
      // Entries of `type (…)`, `const (…)` and `var (…)` groups.
      { re: `^\\t${n}\\s+[\\w.*\\[\\]]+\\s*\\{?\\s*(?://.*)?$` },
      { re: `^\\t${n}(?:\\s+[\\w.*\\[\\]]+)?\\s*=[^=]` },
      { re: `^\\t${n}\\s*(?://.*)?$` },
    ],
  },
  {
    name: "Rust",
    extensions: ["rs"],
    patterns: (n) => [
      { re: `^\\s*${RUST_VISIBILITY}(?:(?:const|async|unsafe|default|extern(?:\\s+"[^"]*")?)\\s+)*fn\\s+${n}\\s*[<(]` },
      { re: `^\\s*${RUST_VISIBILITY}(?:unsafe\\s+)?(?:struct|enum|union|trait|type|mod)\\s+${n}${END}` },
      { re: `^\\s*${RUST_VISIBILITY}(?:const|static)\\s+(?:mut\\s+)?${n}\\s*:` },
      { re: `^\\s*macro_rules!\\s*${n}${END}` },
    ],
  },
  {
    name: "Java",
    extensions: ["java"],
    patterns: (n) => [
      { re: `^\\s*${JVM_ANNOTATIONS}${JAVA_MODIFIERS}(?:class|interface|enum|record|@interface)\\s+${n}${END}` },
      typed(`^\\s*${JVM_ANNOTATIONS}${JAVA_MODIFIERS}(?:${ARGS}\\s+)?${TYPED}\\s+${n}\\s*\\(`),
      typed(`^\\s*${JVM_ANNOTATIONS}${JAVA_MODIFIERS}${TYPED}\\s+${n}\\s*(?:=[^=]|;)`),
    ],
  },
  {
    name: "Kotlin",
    extensions: ["kt", "kts"],
    patterns: (n) => [
      { re: `^\\s*${JVM_ANNOTATIONS}${KOTLIN_MODIFIERS}fun\\s+(?:${ARGS}\\s*)?(?:[\\w.<>?, ]+\\.)?${n}\\s*[(<]` },
      { re: `^\\s*${JVM_ANNOTATIONS}${KOTLIN_MODIFIERS}(?:class|interface|object|typealias)\\s+${n}${END}` },
      { re: `^\\s*${JVM_ANNOTATIONS}${KOTLIN_MODIFIERS}(?:val|var)\\s+(?:${ARGS}\\s*)?(?:[\\w.<>?]+\\.)?${n}${END}` },
    ],
  },
  {
    name: "C/C++",
    extensions: ["c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "inl", "tpp"],
    patterns: (n) => [
      { re: `^\\s*#\\s*define\\s+${n}${END}` },
      { re: `^\\s*(?:typedef\\s+)?${CPP_TEMPLATE}(?:struct|class|union|enum)(?:\\s+(?:class|struct))?\\s+(?:\\w+\\s+)*${n}\\s*(?:[{:;]|final${END}|$)` },
      { re: `^\\s*(?:inline\\s+)?namespace\\s+(?:\\w+::)*${n}${END}` },
      { re: `^\\s*${CPP_TEMPLATE}using\\s+${n}\\s*=` },
      { re: `\\btypedef\\b.*[\\s*(]${n}\\s*[);\\[]` },
      { re: `^\\}\\s*${n}\\s*;` },
      // Functions and prototypes: specifiers and a return type, then the (maybe qualified) name.
      typed(`^\\s*${CPP_TEMPLATE}${C_TYPE_TOKENS}(?:[\\w<>]+::)*~?${n}\\s*\\(`),
      // Out-of-class constructors and methods (`Foo::Foo(…)`), and GNU style with the type on the line above.
      { re: `^(?:[\\w<>]+::)+~?${n}\\s*\\(`, unless: /;\s*$/ },
      { re: `^${n}\\s*\\(`, unless: /;\s*$/ },
      // Variables and constants.
      typed(`^\\s*${C_TYPE_TOKENS}${n}\\s*(?:=[^=]|;|\\[|\\{)`),
    ],
  },
  {
    name: "C#",
    extensions: ["cs"],
    patterns: (n) => [
      { re: `^\\s*${CSHARP_ATTRIBUTES}${CSHARP_MODIFIERS}(?:class|struct|interface|enum|record(?:\\s+(?:class|struct))?)\\s+${n}${END}` },
      { re: `^\\s*namespace\\s+(?:[\\w.]+\\.)?${n}${END}` },
      typed(`^\\s*${CSHARP_ATTRIBUTES}${CSHARP_MODIFIERS}delegate\\s+${TYPED}\\s+${n}\\s*[(<]`),
      typed(`^\\s*${CSHARP_ATTRIBUTES}${CSHARP_MODIFIERS}${TYPED}\\s+${n}\\s*(?:${ARGS})?\\s*\\(`),
      // Properties, fields and constants.
      typed(`^\\s*${CSHARP_ATTRIBUTES}${CSHARP_MODIFIERS}${TYPED}\\s+${n}\\s*(?:\\{|=>|=[^=>]|;|$)`),
    ],
  },
  {
    name: "Ruby",
    extensions: ["rb", "rake", "gemspec"],
    patterns: (n) => [
      { re: `^\\s*(?:(?:private|protected|public|module_function)\\s+)?def\\s+(?:self\\.|[\\w:]+\\.)?${n}(?:[\\s(;=]|$)` },
      { re: `^\\s*(?:class|module)\\s+(?:[\\w:]+::)?${n}(?:[\\s<;]|$)` },
      { re: `\\battr_(?:reader|writer|accessor)\\b.*:${n}(?:[\\s,]|$)` },
      { re: `\\bdefine_method\\s*\\(?\\s*:${n}(?:[\\s,)]|$)` },
      // Constants are capitalized; a lower-case assignment is a local variable.
      ...(/^[A-Z]/.test(n) ? [{ re: `^\\s*${n}\\s*=[^=~>]` }] : []),
    ],
  },
  {
    name: "PHP",
    extensions: ["php"],
    patterns: (n) => [
      { re: `^\\s*(?:(?:public|private|protected|static|final|abstract|readonly)\\s+)*function\\s+&?${n}\\s*\\(` },
      { re: `^\\s*(?:(?:final|abstract|readonly)\\s+)*(?:class|interface|trait|enum)\\s+${n}${END}` },
      { re: `^\\s*(?:(?:public|private|protected|final)\\s+)*const\\s+(?:[\\w\\\\?|]+\\s+)?${n}\\s*=` },
      { re: `\\bdefine\\s*\\(\\s*['"]${n}['"]` },
      { re: `^\\s*(?:(?:public|private|protected|static|readonly|var)\\s+)+(?:\\??[\\w\\\\|]+\\s+)?[$]${n}${END}` },
    ],
  },
  {
    name: "Swift",
    extensions: ["swift"],
    patterns: (n) => [
      { re: `^\\s*${SWIFT_MODIFIERS}func\\s+${n}\\s*[(<]` },
      { re: `^\\s*${SWIFT_MODIFIERS}(?:class|struct|enum|protocol|actor|typealias|associatedtype)\\s+${n}${END}` },
      { re: `^\\s*${SWIFT_MODIFIERS}(?:let|var)\\s+${n}${END}` },
    ],
  },
];

/** The languages symbol mode understands, for messages and documentation. */
export const SYMBOL_LANGUAGES: readonly string[] = LANGUAGES.map((language) => language.name);

/** Why a model-supplied name cannot be searched as a symbol; undefined when it can. */
export function symbolNameError(name: string): string | undefined {
  if (NAME.test(name) && name.length <= MAX_NAME) return undefined;
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
  const qualified = /^[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)+$/.exec(name);
  const hint = qualified ? `; give the last part alone (${name.split(/\.|::|#|->/).at(-1)})` : "; to search for other text, use a pattern instead";
  return `name ${shown} is not an identifier (letters, digits, _ and $, not starting with a digit, at most ${MAX_NAME} characters, optionally ending in ? or !)${hint}`;
}

/** The name as a regex literal for ripgrep and JavaScript: `$`, `?` and `!` go in brackets, which need no escape in either. */
function escapeName(name: string): string {
  return name.replace(/[$?!]/g, "[$&]");
}

export type SymbolSearch = {
  /** The candidate lines for ripgrep: the name as a whole word. */
  regexp: string;
  /** Include globs for the supported files, used when the model gave no glob of its own. */
  globs: string[];
  /** True when `line` of the file at `path` defines the name. */
  isDefinition(path: string, line: string): boolean;
};

/** The search for definitions of `name`, which must have passed `symbolNameError`. */
export function symbolSearch(name: string): SymbolSearch {
  const escaped = escapeName(name);
  const byExtension = new Map<string, { re: RegExp; unless?: RegExp }[]>();
  const globs: string[] = [];
  for (const language of LANGUAGES) {
    const compiled = language.patterns(escaped).map((pattern) => ({ re: new RegExp(pattern.re), ...(pattern.unless ? { unless: pattern.unless } : {}) }));
    for (const extension of language.extensions) {
      byExtension.set(extension, compiled);
      globs.push(`*.${extension}`);
    }
  }
  return {
    regexp: `(?:^|[^A-Za-z0-9_$])${escaped}${END}`,
    globs,
    isDefinition(path, line) {
      const patterns = byExtension.get(extname(basename(path)).slice(1).toLowerCase());
      const checked = line.slice(0, CHECKED_CHARS);
      return patterns?.some((pattern) => pattern.re.test(checked) && !pattern.unless?.test(checked)) ?? false;
    },
  };
}
