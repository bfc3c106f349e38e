"""General-language words that say little about what a prompt is about.

Recall decides whether a prompt is "about" something in the memory store by the share of
the prompt's informative words that a memory matches. Chatty prompts ("can you pull every
open issue and write a CSV, set up the usual stuff") are mostly everyday words, so the
words listed here weigh little and the rest (worktree, tokenizer, alembic, csv, ...) weigh a
lot.

COMMON holds lowercase, accent-free tokens as the query tokenizer produces them (split on
non-alphanumerics, so contractions appear as their fragments: "don", "isn", "ll"): the most
frequent everyday English words in their common inflections, everyday Portuguese words, and
the generic software-conversation words found in almost any developer prompt (code, file,
error, fix, test, build, ...). Technology, product, protocol and domain words (git, docker,
sql, regex, token, deploy, cache, webhook, invoice, login, email, push, release, ...) are
deliberately absent: they are what a prompt is about. So are the names of days and months:
"it's friday 17:00" is a deploy-freeze question, "back in june" points at an event.

No imports: this module sits on the prompt path and must load in well under a millisecond, so
the words stay one string (a set of ~2,900 strings would cost ~0.4 ms to build on every prompt)
and membership is a substring search (about 50,000 instructions for a word it does not hold),
done once per word and process.
"""

_TEXT = """
about above across after afterwards again against ago ahead all almost alone along already
also although always am among amongst an and another any anybody anyhow anyone anything
anyway anyways anywhere apart are aren around as aside at away back be became because become
becomes becoming been before beforehand behind being below beside besides between beyond
both but by can cannot cant could couldn did didn do does doesn doing don done down during
each either else elsewhere enough etc even ever every everybody everyone everything
everywhere except few for former formerly from further furthermore had hadn has hasn have
haven having he hence her here hereby herein hers herself him himself his how however if in
indeed inside instead into is isn it its itself just last latter least less let lets ll many
may maybe me meanwhile might mine more moreover most mostly much must mustn my myself namely
neither never nevertheless next no nobody none noone nor not nothing now nowhere of off
often on once one ones only onto or other others otherwise our ours ourselves out outside
over own per perhaps quite rather re really same several shall shan she should shouldn since
so some somebody somehow someone something sometime sometimes somewhat somewhere still such
than that thats the their theirs them themselves then thence there thereafter thereby
therefore therein theres these they this those though through throughout thru thus till to
together too toward towards under unless unlike until up upon us ve very via vs was wasn we
well were weren what whatever whats when whenever where whereas wherever whether which while
who whoever whole whom whose why will with within without won would wouldn yet you your
yours yourself yourselves im ive id youre youve theyre dont doesnt didnt wont isnt arent
wasnt shouldnt wouldnt couldnt hows whys wheres heres tho whereby

ok okay yes yeah yep yup nope nah hi hey hello thanks thank please sorry sure cheers bye
alright right wrong true false correct exactly agreed hmm oh ah wow oops lol haha btw fyi
asap pls plz thx

zero two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
hundred hundreds thousand thousands million millions billion dozen dozens half quarter
double triple single first second third fourth fifth sixth seventh eighth ninth tenth twice
number numbers count counts counted counting total totals percent couple pair pairs

time times day days daily week weeks weekly weekend weekends month months monthly year years
yearly hour hours hourly minute minutes seconds moment moments today tonight tomorrow
yesterday morning mornings afternoon evening evenings night nights noon midnight soon later
earlier early late lately recently recent currently current past future present date dates
season seasons summer autumn fall winter      
           
period periods meantime deadline schedule scheduled calendar age ages century decade decades
era

thing things stuff way ways bit bits lot lots kind kinds sort sorts type types part parts
piece pieces place places point points side sides end ends start starts beginning middle top
bottom front left center centre edge edges corner corners area areas space spaces level
levels order orders case cases example examples sample samples instance detail details fact
facts idea ideas reason reasons result results effect effects cause causes purpose goal
goals plan plans step steps list lists group groups set sets item items option options
choice choices chance chances matter matters issue issues problem problems question
questions answer answers solution solutions situation state states status form forms shape
shapes size sizes amount amounts range ranges rate rates line lines row rows column columns
table tables box boxes field fields label labels title titles name names word words sentence
sentences paragraph paragraphs text texts letter letters note notes page pages section
sections chapter chapters book books story stories article articles document documents paper
papers copy copies draft drafts version versions edition series

people person persons man men woman women child children kid kids boy boys girl girls baby
family families friend friends parent parents mother father mom dad brother sister son
daughter wife husband guy guys folks human humans member members team teams staff boss
manager managers colleague colleagues partner partners customer customers owner owners
worker workers student students teacher teachers neighbor neighbors stranger crowd community
society public

house houses home homes room rooms kitchen bathroom bedroom office offices building
buildings street streets road roads city cities town towns country countries world village
region land earth ground floor floors wall walls door doors window roof garden park school
schools church hospital shop shops store stores market restaurant hotel station airport farm
beach river lake sea ocean mountain hill forest island sky sun moon star stars weather rain
snow wind air water fire tree trees flower flowers grass stone rock sand

object objects tool tools machine machines car cars bus plane bike boat truck phone phones
mobile computer computers laptop screen screens keyboard mouse camera picture pictures photo
photos image images video videos music song songs movie movies film show shows game games
ball toy card cards gift bag bags cup cups glass bottle plate chair chairs bed desk lamp
clock watch pen pencil map ticket tickets money cash price prices cost costs food foods meal
meals breakfast lunch dinner coffee tea milk bread meat fish fruit egg eggs sugar salt drink
drinks wine beer clothes shirt shoes hat dress coat pocket

body head face eye eyes ear ears nose mouth hand hands arm arms leg legs foot feet finger
fingers heart blood skin hair health pain sick ill doctor life lives death birth

good better best bad worse worst great greater greatest nice nicer nicest fine cool big
bigger biggest small smaller smallest large larger largest little tiny huge long longer
longest short shorter shortest high higher highest low lower lowest tall wide narrow deep
full empty heavy light fast faster fastest slow slower slowest quick quicker quickly slowly
easy easier easiest hard harder hardest simple simpler simplest complex difficult new newer
newest old older oldest young younger fresh clean dirty clear cleaner clearer hot cold warm
dry wet soft strong weak rich poor cheap expensive free busy ready happy sad glad angry
afraid tired certain possible impossible likely unlikely real exact important main major
minor basic general common usual unusual normal special particular specific similar
different entire complete partial final initial original previous following open closed
close near far nearby local various extra additional separate proper regular random strange
weird funny odd serious safe dangerous beautiful ugly pretty lovely awesome amazing perfect
terrible horrible awful excellent fantastic wonderful interesting boring useful useless
helpful careful obvious visible hidden available able unable black white red blue green
yellow orange purple pink brown gray grey bright color colors colour colours

usually normally generally typically probably actually basically literally simply clearly
certainly definitely totally fully completely entirely nearly hardly barely mainly
especially particularly specifically directly immediately finally eventually suddenly easily
properly correctly badly forward backward backwards upstairs downstairs abroad online
offline initially originally previously manually automatically hopefully honestly
obviously apparently seriously briefly anymore nowadays everyday kinda sorta gonna wanna gotta
lemme gimme bunch

go goes went gone going get gets got gotten getting make makes made making take takes took
taken taking give gives gave given giving put puts putting say says said saying tell tells
told telling ask asks asked asking see sees saw seen seeing look looks looked looking
watches watched watching know knows knew known knowing think thinks thought thinking feel
feels felt feeling want wants wanted wanting need needs needed needing like likes liked
liking love loves loved hate hates hated come comes came coming leave leaves leaving keep
keeps kept keeping letting seem seems seemed mean means meant try tries tried trying call
calls called calling find finds found finding showed shown showing hear hears heard hearing
play plays played playing turn turns turned turning move moves moved moving live lived
living believe believes believed hold holds held holding bring brings brought bringing
happen happens happened happening write writes wrote written writing read reads reading sit
sits sat sitting stand stands stood standing lose loses lost losing meet meets met meeting
meetings include includes included including continue continues continued continuing learn
learns learned learning lead leads led leading understand understands understood
understanding follow follows followed stop stops stopped stopping create creates created
creating speak speaks spoke spoken speaking talk talks talked talking spend spends spent
spending grow grows grew grown growing opens opened opening walk walks walked walking win
wins winning offer offers offered offering remember remembers remembered remembering forget
forgets forgot forgotten forgetting consider considers considered considering appear appears
appeared appearing buy buys bought buying wait waits waited waiting die dies died send sends
sent sending expect expects expected expecting stay stays stayed staying falls fell fallen
falling cut cuts cutting reach reaches reached reaching kill remain remains remained suggest
suggests suggested suggesting raise raises raised raising pass passes passed passing sell
sells sold selling require requires required requiring decide decides decided deciding
return returns returned returning explain explains explained explaining hope hopes hoped
hoping carry carries carried carrying break breaks broke broken breaking agree agrees
receive receives received receiving pull pulls pulled pulling drop drops dropped dropping
pick picks picked picking wish wishes wished fill fills filled filling check checks checked
checking fix fixes fixed fixing help helps helped helping use uses used using work works
worked working run runs ran running started starting begin begins began begun ended ending
finish finishes finished finishing change changes changed changing add adds added adding
remove removes removed removing delete deletes deleted deleting edit edits edited editing
update updates updated updating replace replaces replaced replacing rename renames renamed
renaming save saves saved saving load loads loaded loading closes closing clears cleared
clearing cleans cleaned cleaning copied copying paste pasted pasting print prints printed
printing setting settings setup reset resets test tests tested testing build builds built
install installs installed installing download downloads downloaded downloading upload
uploads uploaded uploading import imports imported importing export exports exported
exporting share shares shared sharing search searches searched searching sorted sorting
filter filters filtered filtering listed listing compare compares compared comparing match
matches matched matching mark marks marked marking pointed pointing click clicks clicked
clicking press pressed typed typing select selects selected selecting choose chooses chose
chosen choosing apply applies applied applying handle handles handled handling manage
manages managed managing track tracks tracked tracking record records recorded recording
stored storing touch touches touched fit fits fitted fitting hit hits hitting catch catches
caught catching throw throws threw thrown throwing draw draws drew drawn drawing fly flies
flew flying drive drives drove driven driving ride rides rode eat eats ate eaten eating
drank sleep sleeps slept sleeping wake woke wear wears wore worn sing sang dance teach
teaches taught teaching study studies studied studying planned planning prepare prepares
prepared preparing improve improves improved improving increase increases increased decrease
reduce reduces reduced reducing avoid avoids avoided avoiding allow allows allowed allowing
accept accepts accepted accepting answered answering reply replies replied describe
describes described describing discuss discussed discussing mention mentions mentioned
mentioning notice noticed noticing noted realize realized realise realised guess guessed
guessing wonder wondering imagine imagined prefer prefers preferred enjoy enjoyed worry
worried care cares cared caring mind minds mattered depend depends depended depending belong
belongs contain contains contained containing involve involves involved cover covers covered
covering join joins joined joining fold split splits splitting connect connects connected
connecting attach attached link links linked linking formed support supports supported
supporting provide provides provided providing control controlled explore explored feed fed
grab grabs grabbed grabbing hang hung hide hides hid hiding jump jumped kick knock lay laid
lie lies lying lift mix mixed pour rest shake shook shut slide slip spin spread squeeze
stick stuck swing tie wrap wrapped folded bend bent burn burned dig drag dragged hurry rush
rushed pack packed unpack wash washed cook cooked fry bake boil heat heated cooled melt
repair repaired tidy organize organized organise arrange arranged gather gathered collect
collected collecting combine combined separated divide divided doubled measure measured
weigh confirm confirmed confirming verify verified ensure fail fails failed failing succeed
succeeded miss misses missed missing lack lacks lacked skip skips skipped skipping ignore
ignores ignored ignoring repeat repeats repeated repeating reuse reused retry retried redo
undo

ought dare

code codes coding coded file files folder folders directory directories path paths function
functions method methods error errors bug bugs value values data user users app apps
application applications project projects script scripts command commands output outputs
input inputs message messages warning warnings default defaults feature features program
programs software system systems site sites website websites web button buttons menu menus
tab tabs format formats formatted template templates docs doc report reports summary
summaries overview entry entries info information content contents description descriptions
comment comments ids string strings character characters length width height style styles
design designs font fonts icon icons logo audio sound view views preview display displayed
restart rerun process processes task tasks job jobs flow flows requirement requirements
manual guide guides tutorial tips tip trick tricks mode modes preference preferences profile
profiles helper helpers

chat chats conversation conversations discussion feedback

unknown product products business businesses company companies history experience research
education law art science nature rule rules structure pattern patterns quality performance
speed action actions event events news language languages industry decision decisions
activity power energy risk risks government president war party national international
social personal

os um uma uns umas de da dos das na nas em num numa ao aos pelo pela pelos pelas para pra
pro por com sem sobre entre desde que quem qual quais quando onde como porque pq ou mas nem
se ja tambem muito muita muitos muitas pouco pouca poucos poucas mais menos tao tanto eu ele
ela nos eles elas voce voces vc vcs te lhe meu minha meus minhas seu sua seus suas nosso
nossa dele dela esse essa esses essas este esta isso isto aquele aquela aquilo aqui ali la
ca nao sim ainda agora depois antes entao assim tipo sempre nunca talvez quase bem mal
apenas somente cada outro outra outros outras mesmo mesma algum alguma alguns algumas nenhum
nenhuma qualquer todo toda todos todas tudo nada algo alguem ninguem varios varias proprio
propria durante enquanto porem alem embora caso tal junto perto longe dentro fora baixo
frente atras lado ontem hoje amanha cedo tarde noite manha

ser sou sao foi fui seja sendo estar estou estao estava ter tenho tem temos tinha teve tive
haver ha havia ir vou vai vamos indo fazer faco faz fiz fez feito fazendo faca poder posso
pode podemos podia querer quero quer queria precisar preciso precisa precisamos dever deve
devia dar deu dado ver vejo viu veja olhar olha olhe achar acho achei saber sei sabe dizer
diz disse falar fala falou usar usa usou usando criar cria criou mudar muda mudou mudei
mudanca mudancas editar edita editou enviar envia enviou enviei mandar manda mandou colocar
coloca colocou coloquei pegar pega pegou peguei puxar puxa puxou rodar roda rodou rodei
rodando testar testa testou corrigir corrige corrigiu arrumar arruma arrumei ajustar ajusta
ajuste adicionar adiciona adicionei remover removi tirar tira tirei apagar apaga apaguei
deixar deixa deixei voltar volta voltou abrir abre abriu aberto fechar fecha fechado salvar
salva salvei subir sobe subiu baixar baixa baixei mostrar mostra ajudar ajuda verificar
verifica conferir checar lembrar lembra lembro esquecer esqueci continuar continua comecar
comeca comecou terminar termina terminou acabar acabou funcionar funciona funcionou
funcionando quebrar quebrou trocar troca escrever escreve escrito ler le leu gerar gera
gerou buscar busca procurar procura encontrar encontrei passar passa passou chegar entrar
sair levar trazer seguir segue tentar tenta tentei conseguir consegui entender entendi
explicar explica pensar gostar gosto esperar espera resolver resolve melhorar melhora
atualizar atualiza organizar separar juntar copiar copia colar cola mover limpar montar
preparar comprar vender ficar fica ficou parar acontecer acontece aconteceu conhecer chamar
chama trabalhar perguntar responder escolher marcar incluir manter contar parece

coisa coisas vez dia semana mes ano hora minuto segundo tempo momento fim inicio meio prazo
pessoa gente chefe colega equipe cliente usuario dono texto mensagem nome tela botao pagina
arquivo pasta codigo erro problema pergunta resposta exemplo parte lugar casa trabalho
empresa projeto tarefa lista tabela campo valor numero linha coluna palavra frase titulo
imagem foto cor tamanho forma jeito modo ideia ponto versao teste funcao informacao dinheiro
preco duvida detalhe passo etapa processo sistema celular telefone computador reuniao
documento relatorio resumo nota comentario conversa assunto motivo resultado opcao escolha
padrao mundo papel estilo fonte letra grupo ordem nivel metade dados arquivos erros dias
vezes pessoas mensagens testes usuarios clientes

bom boa ruim melhor pior grande pequeno pequena novo nova velho antigo certo errado facil
dificil rapido lento simples igual diferente importante possivel impossivel pronto claro
obvio geral principal unico vazio cheio bonito maior menor primeiro segunda terceiro ultimo
proximo anterior atual legal otimo estranho correto completo livre

dois duas tres quatro cinco seis sete oito nove dez vinte cem mil terca quarta quinta

obrigado obrigada valeu beleza oi ola tchau opa favor desculpa desculpe
""".replace("\n", " ")


_SEEN: "dict[str, bool]" = {}  # COMMON's answers: a search costs ~50,000 instructions, and every source asks
MAX_SEEN = 4096  # a long-lived process (serve, mcp) remembers at most as many


class _Words:
    """A read-only set of words kept as one space-separated string. Each word is searched for
    once per process: recall over three sources asks about the same words three times (issue 41)."""

    __slots__ = ()

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        got = _SEEN.get(word)
        if got is None:
            if len(_SEEN) >= MAX_SEEN:
                _SEEN.clear()
            got = _SEEN[word] = bool(word) and " " not in word and " " + word + " " in _TEXT
        return got

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(set(_TEXT.split())))

    def __len__(self) -> int:
        return len(set(_TEXT.split()))


COMMON = _Words()
