// Mdl.g4 - the grammar of the modelc model-description language (.mdl).
//
// The reference is docs/language.md. This grammar only describes syntax;
// names, dtypes, shapes and devices are checked by compiler/sema. It is
// written to be LL(1) almost everywhere so ANTLR's SLL prediction is fast.
grammar Mdl;

// ---------------------------------------------------------------- file ---
file       : importDecl* modelDecl* EOF ;
importDecl : IMPORT qualifiedName ;
qualifiedName : IDENT ('.' IDENT)* ;

modelDecl  : MODEL IDENT devParams? valueParams? '{' member* '}' ;
devParams  : '<' devParam (',' devParam)* '>' ;
devParam   : IDENT ':' DEVICE ;
valueParams: '(' (valueParam (',' valueParam)*)? ')' ;
// `dtype: dtype = f32`: the type name `dtype` is contextual (an IDENT), as
// `dtype` is also the name of creation ops' argument (`zeros(s, dtype: f16)`).
valueParam : IDENT ':' (scalarType | optionType | tupleType | IDENT) ('=' expr)? ;
// `activation: "relu" | "gelu" = "relu"`: one of the listed strings.
optionType : STRING_LIT ('|' STRING_LIT)* ;
// `kernel_size: (int, int)`: a tuple of ints (PyTorch's `_pair`); an int
// argument stands for all of them. Its elements are `kernel_size[0]`, ...
tupleType  : '(' scalarType (',' scalarType)+ ','? ')' ;

member
  : (PARAM | BUFFER) IDENT ':' type ('=' expr)?   # stateMember
  // `rest = [Layer(...) for k in 1..n] as "{}_l{k}"`: the submodel's state
  // names (`as` is contextual).
  | IDENT '=' expr (IDENT STRING_LIT)?             # submodelMember
  | FN IDENT fnDTypes? '(' (fnParam (',' fnParam)*)? ')' ('->' resultType)? block  # fnMember
  | memberIf                                       # ifMember
  | ASSERT expr (',' STRING_LIT)?                  # assertMember  // on value arguments
  ;
// State and submodels that exist only when a compile-time condition holds:
// `if bias { param bias: f32[out] }`.
memberIf    : IF expr memberBlock (ELSE (memberIf | memberBlock))? ;
memberBlock : '{' member* '}' ;
fnParam    : IDENT ':' type ;
// `fn forward<T: dtype>(x: T[...] @ D) -> T[...] @ D`: dtypes the arguments
// bind at each call (a stateless layer works in every floating dtype).
fnDTypes   : '<' fnDType (',' fnDType)* '>' ;
fnDType    : IDENT ':' IDENT ;
// One result, or several as a tuple: `-> (f32[B, 5] @ D, f32[] @ D)`.
resultType : type | '(' type (',' type)* ','? ')' ;

// --------------------------------------------------------------- types ---
type       : tensorType | scalarType ;
// The dtype is written (`f32[...]`) or a model's dtype parameter (`dtype[...]`).
tensorType : (dtype | IDENT) '[' (dim (',' dim)*)? ']' ('@' device)? ;
scalarType : INT_T | FLOAT_T | BOOL ;
dtype      : F16 | BF16 | F32 | F64 | I32 | I64 | BOOL ;
// Like expressions, a flat list; the AST builder applies precedence.
dim        : dimAtom (('+' | '-' | '*' | '/') dimAtom)* ;
// `kernel_size[0]`: an element of a tuple value parameter.
dimAtom    : INT_LIT | IDENT ('[' INT_LIT ']')? | ELLIPSIS | '(' dim ')' ;
device     : CPU | CUDA ':' INT_LIT | IDENT ;

// ---------------------------------------------------------- statements ---
block      : '{' (stmt ';'?)* '}' ;
stmt
  // `let x = ...`, `let x: type = ...`, or `let (logits, loss) = ...`
  // (one alternative, so a bad name after `let` is reported there).
  : LET (IDENT (':' type)? | '(' IDENT (',' IDENT)* ','? ')') '=' expr  # letStmt
  | RETURN (expr (',' expr)*)?             # returnStmt  // `return a, b` returns a tuple
  | FOR IDENT IDENT expr (DOTDOT expr)? block  # forStmt  // `for x in xs`, `for t in 0..T`; `in` is contextual
  | IDENT ('[' slice (',' slice)* ']')? '=' expr  # assignStmt  // `h = ...`, `out[:, t] = h`
  | stmtIf                                 # ifStmt    // on compile-time values
  | expr                                   # exprStmt
  ;

stmtIf     : IF expr block (ELSE (stmtIf | block))? ;

// --------------------------------------------------------- expressions ---
// Binary operators are one flat list; the AST builder applies precedence
// (lowest to highest: `or`; `and`; comparisons, non-associative; `+ -`;
// `* / % @`). Prefix `-`/`not` bind looser than `**`, which is
// right-associative: `-a ** -b ** c` is `-(a ** -(b ** c))`. Keeping these
// flat makes a name one rule deep instead of ten, and lets long operator
// chains parse without recursion. '@' is matrix product and, when its right
// operand is a device, placement of a created tensor (sema decides).
// Operators are written inline (not as rules) so each costs one token node.
expr       : operand ((OR | AND | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%' | '@') operand)* ;
operand    : ('-' | NOT)* primary postfix* ('**' ('-' | NOT)* primary postfix*)* ;
postfix
  : '(' args? ')'                                   # callPostfix
  | '.' IDENT                                       # memberPostfix
  | '[' slice (',' slice)* ']'                      # indexPostfix
  ;
// A model instantiation with device arguments: Encoder<cuda:0>(...).
// Only a name can take them, so `a < b` stays a comparison.
primary
  : (IDENT '.')? IDENT '<' device (',' device)* '>' '(' args? ')'  # instantiatePrimary
  | IDENT                                              # namePrimary
  | INT_LIT                                            # intPrimary
  | (FLOAT_LIT | INF)                                  # floatPrimary
  | (TRUE | FALSE)                                     # boolPrimary
  | (STRING_LIT | UNTERMINATED_STRING)                 # stringPrimary  // reported by the parser
  | CPU                                                # cpuPrimary
  | CUDA ':' INT_LIT                                   # cudaPrimary
  | dtype                                              # dtypePrimary
  | '[' expr FOR IDENT IDENT expr DOTDOT expr ']'      # repeatPrimary  // `[nn.Linear(d, d) for _ in 0..n]`
  | '[' (expr (',' expr)* ','?)? ']'                   # listPrimary
  | '(' expr (',' expr)* ','? ')'                      # parenPrimary  // with a comma: a tuple
  ;
args       : arg (',' arg)* ','? ;
// `name=value` (Python's keyword argument) parses so that the checker can
// say `name: value` once instead of a cascade of syntax errors.
// `device:` is PyTorch's `device=` (a keyword here): parsed as a named
// argument so that the checker can say how a device is written.
arg        : ((IDENT | DEVICE) (':' | '='))? expr ;
// `i`, `a:b`, `:b`, `a::c`, `:`. Written so one token of lookahead decides.
slice      : expr sliceTail? | sliceTail ;
sliceTail  : ':' expr? (':' expr?)? ;

// -------------------------------------------------------------- tokens ---
IMPORT : 'import' ;  MODEL : 'model' ;  PARAM : 'param' ;  BUFFER : 'buffer' ;
ASSERT : 'assert' ;
FN : 'fn' ;  LET : 'let' ;  RETURN : 'return' ;  FOR : 'for' ;  IF : 'if' ;  ELSE : 'else' ;
TRUE : 'true' ;  FALSE : 'false' ;  AND : 'and' ;  OR : 'or' ;  NOT : 'not' ;
DEVICE : 'device' ;  CPU : 'cpu' ;  CUDA : 'cuda' ;
INT_T : 'int' ;  FLOAT_T : 'float' ;  BOOL : 'bool' ;
INF : 'inf' ; // float infinity (`-inf` in a mask)
F16 : 'f16' ;  BF16 : 'bf16' ;  F32 : 'f32' ;  F64 : 'f64' ;  I32 : 'i32' ;  I64 : 'i64' ;

ELLIPSIS : '...' ;
DOTDOT   : '..' ;
IDENT     : [a-zA-Z_] [a-zA-Z_0-9]* ;
FLOAT_LIT : [0-9]+ '.' [0-9]+ EXPONENT? | [0-9]+ EXPONENT ;
INT_LIT   : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;
STRING_LIT : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
// Matched only when the string does not close on its line (longest match
// prefers STRING_LIT otherwise); the parser reports it as its own error.
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* ;

// Doc comments ride on the hidden channel; the AST builder attaches them to
// the declaration that follows.
DOC_COMMENT  : '///' ~[\r\n]* -> channel(HIDDEN) ;
LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
// A block comment that never closes runs to the end of the file (reported
// by the parser, then ignored like a comment).
UNTERMINATED_COMMENT : '/*' ( ~'*' | '*'+ ~[*/] )* '*'* -> channel(HIDDEN) ;
WS : [ \t\r\n]+ -> skip ;

// Anything else is one bad character. The parser reports it; hiding it from
// the grammar lets parsing go on as if it were not there.
BAD_CHAR : . -> channel(HIDDEN) ;
